-- Audit findings per rule, severity and verdict: how many, in how many groups, and the log
-- position of the first one (where to start reading the evidence).
with ranked as (
    select
        *,
        case lower(severity)
            when 'critical' then 1 when 'high' then 2 when 'medium' then 3
            when 'low' then 4 when 'info' then 5 else 6
        end as severity_rank
    from findings
)

select
    snapshot_id,
    rule_id,
    severity,
    severity_rank,
    verdict,
    count(*) as finding_count,
    count(distinct group_id) as group_count,
    min_by(log_partition, named_struct('p', log_partition, 'o', log_offset)) as first_log_partition,
    min_by(log_offset, named_struct('p', log_partition, 'o', log_offset)) as first_log_offset
from ranked
group by snapshot_id, rule_id, severity, severity_rank, verdict
