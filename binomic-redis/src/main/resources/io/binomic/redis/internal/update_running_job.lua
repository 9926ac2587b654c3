-- Applies a job update to a RUNNING job only. KEYS: job. ARGV: one job update.
if redis.call('HGET', KEYS[1], 'state') == 'RUNNING' then apply_job(KEYS[1], 1) return 1 end
return 0
