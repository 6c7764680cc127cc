package offsetlake.oracle;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * Reads a GroupCoordinatorShard's final state by reflection: the groups map of its
 * GroupMetadataManager and the committed and pending transactional offsets of its
 * OffsetMetadataManager. These are private fields whose shapes moved between releases (3.6 keys
 * offsets by TopicPartition, 3.7+ by topic then partition; 3.6/3.7 name the committed offset
 * "offset", 3.8+ "committedOffset"; 3.6 calls classic groups GENERIC), so one reader that probes
 * for each shape serves every release. Timeline maps iterate their latest state.
 */
final class ShardState {
    private ShardState() {
    }

    static Map<String, Object> read(Object shard) {
        Map<String, Object> out = new LinkedHashMap<>();
        Object groupManager = Reflect.field(shard, "groupMetadataManager");
        Object offsetManager = Reflect.field(shard, "offsetMetadataManager");
        out.put("groups", groups((Map<?, ?>) Reflect.field(groupManager, "groups")));
        out.put("offsets", offsets(committedOffsets(offsetManager), null));
        out.put("pending_transactional_offsets", pendingOffsets(offsetManager));
        return out;
    }

    private static List<Object> groups(Map<?, ?> groups) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Object group : groups.values()) {
            out.add(group(group));
        }
        out.sort(Comparator.comparing(g -> (String) g.get("group_id")));
        return new ArrayList<>(out);
    }

    private static Map<String, Object> group(Object group) {
        String type = Reflect.call(group, "type").toString().toLowerCase();
        boolean classic = type.equals("classic") || type.equals("generic");
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("group_id", Reflect.call(group, "groupId"));
        out.put("type", classic ? "classic" : type);
        out.put("state", Reflect.call(group, "stateAsString"));
        out.put("protocol_type", classic ? unwrap(Reflect.call(group, "protocolType")) : null);
        out.put("epoch", Reflect.call(group, classic ? "generationId" : "groupEpoch"));
        out.put("target_assignment_epoch", classic ? null : Reflect.call(group, "assignmentEpoch"));
        Iterable<?> members = classic
            ? (Iterable<?>) Reflect.call(group, "allMembers")
            : ((Map<?, ?>) Reflect.call(group, "members")).values();
        List<Map<String, Object>> memberList = new ArrayList<>();
        for (Object member : members) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("member_id", Reflect.call(member, "memberId"));
            m.put("member_epoch", classic ? null : Reflect.call(member, "memberEpoch"));
            m.put("instance_id", unwrap(Reflect.call(member, classic ? "groupInstanceId" : "instanceId")));
            memberList.add(m);
        }
        memberList.sort(Comparator.comparing(m -> (String) m.get("member_id")));
        out.put("members", new ArrayList<>(memberList));
        return out;
    }

    /** group id -> (TopicPartition -> offset) in 3.6, group id -> topic -> partition -> offset after. */
    private static Map<?, ?> committedOffsets(Object offsetManager) {
        Object offsets = Reflect.hasField(offsetManager, "offsets")
            ? Reflect.field(offsetManager, "offsets") : offsetManager;
        return (Map<?, ?>) Reflect.field(offsets, "offsetsByGroup");
    }

    private static List<Object> pendingOffsets(Object offsetManager) {
        List<Object> out = new ArrayList<>();
        if (!Reflect.hasField(offsetManager, "pendingTransactionalOffsets")) {
            return out;    // 3.6 replays transactional commits as plain ones
        }
        Map<?, ?> byProducer = (Map<?, ?>) Reflect.field(offsetManager, "pendingTransactionalOffsets");
        for (Map.Entry<?, ?> entry : byProducer.entrySet()) {
            Map<?, ?> byGroup = (Map<?, ?>) Reflect.field(entry.getValue(), "offsetsByGroup");
            out.addAll(offsets(byGroup, (Long) entry.getKey()));
        }
        out.sort(Comparator.comparing((Object o) -> (String) ((Map<?, ?>) o).get("group_id"))
            .thenComparing(o -> (Long) ((Map<?, ?>) o).get("producer_id"))
            .thenComparing(o -> (String) ((Map<?, ?>) o).get("topic"))
            .thenComparing(o -> (Integer) ((Map<?, ?>) o).get("partition")));
        return out;
    }

    private static List<Object> offsets(Map<?, ?> byGroup, Long producerId) {
        List<Map<String, Object>> out = new ArrayList<>();
        for (Map.Entry<?, ?> group : byGroup.entrySet()) {
            for (Map.Entry<?, ?> entry : ((Map<?, ?>) group.getValue()).entrySet()) {
                if (entry.getValue() instanceof Map) {
                    for (Map.Entry<?, ?> partition : ((Map<?, ?>) entry.getValue()).entrySet()) {
                        out.add(offset((String) group.getKey(), producerId, (String) entry.getKey(),
                            (Integer) partition.getKey(), partition.getValue()));
                    }
                } else {
                    Object topicPartition = entry.getKey();
                    out.add(offset((String) group.getKey(), producerId,
                        (String) Reflect.call(topicPartition, "topic"),
                        (Integer) Reflect.call(topicPartition, "partition"), entry.getValue()));
                }
            }
        }
        out.sort(Comparator.comparing((Map<String, Object> o) -> (String) o.get("group_id"))
            .thenComparing(o -> (String) o.get("topic"))
            .thenComparing(o -> (Integer) o.get("partition")));
        return new ArrayList<>(out);
    }

    private static Map<String, Object> offset(String groupId, Long producerId, String topic,
                                              int partition, Object committed) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("group_id", groupId);
        if (producerId != null) {
            out.put("producer_id", producerId);
        }
        out.put("topic", topic);
        out.put("partition", partition);
        String offsetField = Reflect.hasField(committed, "committedOffset") ? "committedOffset" : "offset";
        out.put("offset", Reflect.field(committed, offsetField));
        if (producerId == null) {
            OptionalInt leaderEpoch = (OptionalInt) Reflect.field(committed, "leaderEpoch");
            out.put("leader_epoch", leaderEpoch.orElse(-1));
            out.put("metadata", Reflect.field(committed, "metadata"));
            out.put("commit_timestamp", Reflect.field(committed, "commitTimestampMs"));
        }
        return out;
    }

    private static Object unwrap(Object value) {
        return value instanceof Optional ? ((Optional<?>) value).orElse(null) : value;
    }
}
