-- Gives back unique keys at start. KEYS: unique keys of one queue. ARGV: the job id of each.
for k = 1, #KEYS do release_unique(KEYS[k], ARGV[k]) end
return #KEYS
