package io.binomic.spring.boot.autoconfigure;

import io.binomic.api.Backoff;
import io.binomic.api.BinomicConfig;
import io.binomic.api.BrokerConfig;
import io.binomic.api.TaskDefaults;
import io.binomic.api.WorkerConfig;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Turns {@link BinomicProperties} into the builders' configuration, so the builders' own checks
 * (and their messages naming the setting) apply to {@code application.yml} as to code.
 */
final class BinomicConfigs {
    /** The broker option that names a Redisson YAML file. */
    static final String REDISSON_CONFIG = "redisson.config";

    private BinomicConfigs() { }

    static BinomicConfig of(BinomicProperties p) {
        return BinomicConfig.builder()
                .broker(broker(p.getBroker()))
                .worker(worker(p.getWorker()))
                .taskDefaults(taskDefaults(p.getTaskDefaults()))
                .schedulePeriodicTasks(p.isSchedulePeriodicTasks())
                .payloadCodec(p.getPayloadCodec())
                .build();
    }

    static BrokerConfig broker(BinomicProperties.Broker b) {
        Map<String, String> options = new LinkedHashMap<>(b.getOptions());
        if (b.getRedissonConfig() != null) {
            String before = options.put(REDISSON_CONFIG, b.getRedissonConfig());
            if (before != null && !before.equals(b.getRedissonConfig())) {
                throw new IllegalArgumentException("binomic.broker.redisson-config (" + b.getRedissonConfig()
                        + ") and binomic.broker.options.redisson.config (" + before + ") differ: set one");
            }
        }
        BrokerConfig.Builder builder = BrokerConfig.builder()
                .connectTimeout(b.getConnectTimeout())
                .commandTimeout(b.getCommandTimeout())
                .keyPrefix(b.getKeyPrefix())
                .maxPayloadBytes(b.getMaxPayloadBytes())
                .deadLetterMaxCount(b.getDeadLetterMaxCount())
                .deadLetterMaxAge(b.getDeadLetterMaxAge())
                .options(options);
        if (b.getUrl() != null) {
            builder.url(b.getUrl());
        }
        if (b.getBrokerId() != null) {
            builder.brokerId(b.getBrokerId());
        } else if (b.getRedissonConfig() != null && b.getUrl() == null) {
            // The file says where Redis is; without a URL, only the id can choose the Redis broker.
            builder.brokerId("redis");
        }
        if (b.getUsername() != null) {
            builder.username(b.getUsername());
        }
        if (b.getPassword() != null) {
            builder.password(b.getPassword());
        }
        if (b.getDatabase() != null) {
            builder.database(b.getDatabase());
        }
        return builder.build();
    }

    static WorkerConfig worker(BinomicProperties.Worker w) {
        WorkerConfig.Builder builder = WorkerConfig.builder()
                .queues(w.getQueues())
                .concurrency(w.getConcurrency())
                .shutdownGrace(w.getShutdownGrace())
                .leaseTimeout(w.getLeaseTimeout());
        // left out, they follow a short lease (WorkerConfig's defaults)
        if (w.getPollTimeout() != null) {
            builder.pollTimeout(w.getPollTimeout());
        }
        if (w.getReclaimInterval() != null) {
            builder.reclaimInterval(w.getReclaimInterval());
        }
        if (w.getConsumerName() != null) {
            builder.consumerName(w.getConsumerName());
        }
        return builder.build();
    }

    static TaskDefaults taskDefaults(BinomicProperties.TaskDefaults t) {
        BinomicProperties.Backoff b = t.getBackoff();
        TaskDefaults.Builder builder = TaskDefaults.builder()
                .maxAttempts(t.getMaxAttempts())
                .taskTimeout(t.getTaskTimeout())
                .backoff(Backoff.builder().base(b.getBase()).factor(b.getFactor()).cap(b.getCap()).jitter(b.getJitter()).build());
        if (t.getStaleAfter() != null) {
            builder.staleAfter(t.getStaleAfter());
        }
        return builder.build();
    }
}
