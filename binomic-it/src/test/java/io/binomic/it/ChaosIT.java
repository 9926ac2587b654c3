package io.binomic.it;

import io.binomic.api.BrokerConfig;
import io.binomic.api.spi.Broker;
import io.binomic.it.ChaosReport.Fault;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The chaos suite on one Redis with an append-only file: besides the worker JVMs and the
 * master that {@link ChaosDriver} kills, freezes and restarts, Redis is restarted (crashed or shut
 * down), unreachable for a while, and its client connections killed. Batches and workflows run
 * among the jobs ({@link ChaosFlows}) in the long run, and in the short one with {@code -Dchaos.flows=true}.
 *
 * <p>The short size runs in every {@code ./mvnw verify}; {@code ./mvnw -Pchaos verify
 * -Dchaos.tasks=100000 -Dchaos.minutes=10 -Dchaos.seed=42} runs the long one. A failed run prints
 * its seed first: the same seed gives the same fault schedule and workload.
 */
class ChaosIT {
    @Test
    void underRandomFaultsNoMessageIsLostAndEveryDuplicateComesFromAWorkerKilledOrFrozenWhileRunningIt() throws Exception {
        new ChaosDriver(new OneRedis(RedisServer.startNew("--appendonly", "yes", "--appendfsync", "always")),
                ChaosDriver.Size.fromSystemProperties()).run();
    }

    /** One redis-server; submissions pause while it is restarted or away, so that no submission is left half-known. */
    private record OneRedis(RedisServer redis) implements ChaosTarget {
        @Override
        public String name() {
            return "chaos";
        }

        @Override
        public String label() {
            return "CHAOS";
        }

        @Override
        public BrokerConfig broker() {
            return BrokerConfig.builder().url(redis.url()).build();
        }

        @Override
        public List<String> redisCycle(ChaosDriver.Size size) {
            return size.longOutageMin() == null
                    ? List.of("REDIS_RESTART", "REDIS_OUTAGE", "CLIENT_KILL", "CLIENT_KILL")
                    : List.of("REDIS_RESTART", "REDIS_OUTAGE", "CLIENT_KILL", "CLIENT_KILL", "REDIS_LONG_OUTAGE");
        }

        @Override
        public boolean pausesSubmissions() {
            return true;
        }

        @Override
        public Fault apply(String kind, Random random, ChaosDriver.Size size) {
            long t = System.currentTimeMillis();
            String detail = switch (kind) {
                case "REDIS_RESTART" -> {
                    boolean crash = random.nextBoolean();
                    if (crash) {
                        redis.crash();
                    } else {
                        redis.stop();
                    }
                    redis.start();
                    yield crash ? "SIGKILL, restarted from its append-only file" : "SHUTDOWN SAVE, restarted";
                }
                case "REDIS_OUTAGE", "REDIS_LONG_OUTAGE" -> {
                    Duration d = kind.equals("REDIS_OUTAGE") ? size.shortOutage()
                            : Duration.ofMillis(ChaosDriver.between(random, size.longOutageMin(), size.longOutageMax()));
                    if (random.nextBoolean()) {
                        redis.freezeFor(d);
                        yield "frozen (SIGSTOP) " + d.toMillis() + " ms";
                    }
                    redis.stop();
                    ChaosDriver.sleep(d.toMillis());
                    redis.start();
                    yield "stopped " + d.toMillis() + " ms";
                }
                case "CLIENT_KILL" -> "CLIENT KILL TYPE normal: " + redis.killClients() + " connections";
                default -> throw new IllegalArgumentException(kind);
            };
            return new Fault(kind.equals("REDIS_LONG_OUTAGE") ? "REDIS_OUTAGE" : kind, 0, t, System.currentTimeMillis(), detail);
        }

        @Override
        public boolean batches() {
            // The long run always; the short one (every build) when asked, with -Dchaos.flows=true.
            return "long".equals(System.getProperty("chaos.size")) || Boolean.getBoolean("chaos.flows");
        }

        @Override
        public boolean workflows() {
            return batches();
        }

        @Override
        public Broker inspector() {
            return Brokers.redis(redis);
        }

        @Override
        public void close() {
            redis.close();
        }
    }
}
