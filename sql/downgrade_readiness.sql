-- Per snapshot and target version: what an older coordinator would do with the log. BREAK fails
-- the partition load; DROP and RESURRECT lose or bring back state; READ-AS-LATEST and INFO are
-- warnings. A target is ready when none of the first three is found.
with per_target as (
    select
        snapshot_id,
        target_version,
        count_if(class = 'BREAK') as break_count,
        -- A dropped tombstone or superseded record (severity info) loses nothing.
        count_if(class = 'DROP' and lower(severity) <> 'info') as drop_count,
        count_if(class = 'RESURRECT') as resurrect_count,
        count_if(class = 'READ-AS-LATEST') as read_as_latest_count,
        count_if(class = 'INFO') as info_count,
        sum(record_count) as affected_record_count,
        count(distinct group_id) as affected_group_count,
        count(distinct partition) as affected_partition_count
    from downgrade_findings
    group by snapshot_id, target_version
)

select
    *,
    break_count = 0 and drop_count = 0 and resurrect_count = 0 as is_ready,
    read_as_latest_count + info_count > 0 as has_warnings,
    case
        when break_count > 0 then 'BREAK'
        when drop_count > 0 then 'DROP'
        when resurrect_count > 0 then 'RESURRECT'
        when read_as_latest_count > 0 then 'READ-AS-LATEST'
        else 'OK'
    end as worst_class
from per_target
