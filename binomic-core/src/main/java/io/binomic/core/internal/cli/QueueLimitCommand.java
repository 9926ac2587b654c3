package io.binomic.core.internal.cli;

import io.binomic.api.QueueLimits;
import io.binomic.api.RateLimit;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * {@code binomic queue limit NAME [--rate N/PERIOD] [--burst N] [--concurrency N] [--none]}: sets,
 * removes or (with no limit option) shows the limits of a whole queue, kept in the broker; every
 * worker of the queue applies them within about a second.
 */
final class QueueLimitCommand extends Command {
    static final Option RATE = Option.value("rate", "N/PERIOD",
            "at most N starts per PERIOD across all workers: 50/s, 1000/h, 5/500ms, 10/2m. Defaults to no rate limit");
    static final Option BURST = Option.value("burst", "N", "starts allowed at once after a quiet spell (with --rate). Defaults to 1");
    static final Option CONCURRENCY = Option.value("concurrency", "N", "at most N of the queue's jobs running at once. Defaults to no limit");
    static final Option NONE = Option.flag("none", "remove the queue's limits");

    QueueLimitCommand(Context cx) {
        super(cx, "queue limit", "Set, remove or show the rate and concurrency limits of a whole queue, for every worker",
                List.of(BROKER, QueueCommand.QUEUE, RATE, BURST, CONCURRENCY, NONE, CREATE), """
                Example: binomic queue limit mail --rate 50/s --concurrency 10
                         binomic queue limit mail            (shows them)
                         binomic queue limit mail --none     (removes them)
                The limits given replace the queue's current ones (a limit left out is removed).
                A job also passes its task's own limits (Task.Builder.rateLimit, concurrencyLimit).
                """);
    }

    @Override
    List<String> takeOperands(List<String> rest) { return QueueCommand.queueAsFirstWord(rest); }

    @Override
    int run(Arguments args) throws UsageException {
        String queue = args.queueName().orElseThrow(() -> new UsageException("name the queue: binomic queue limit NAME --rate 50/s"));
        boolean none = args.has("none");
        boolean setting = args.has("rate") || args.has("concurrency") || args.has("burst");
        if (none && setting) {
            throw new UsageException("--none removes the limits: give it alone, or give --rate/--concurrency without it");
        }
        Optional<QueueLimits> limits = none ? Optional.of(QueueLimits.NONE) : setting ? Optional.of(parse(args)) : Optional.empty();
        return onBroker(args, List.of(queue), binomic -> {
            if (limits.isPresent()) {
                requireKnown(args, binomic, queue);
                binomic.queues().setLimits(queue, limits.get());
            } else {
                warnIfUnknown(binomic, queue);
            }
            out.println("limits of queue " + queue + " on " + brokerRead(binomic) + ": " + limits.orElseGet(() -> binomic.queues().limits(queue)));
            if (limits.isPresent()) {
                warnIfNeverRead(binomic, queue);
            }
        });
    }

    private static QueueLimits parse(Arguments args) throws UsageException {
        QueueLimits.Builder b = QueueLimits.builder();
        Optional<String> rate = args.value("rate");
        if (args.has("burst") && rate.isEmpty()) {
            throw new UsageException("--burst goes with --rate: binomic queue limit NAME --rate 50/s --burst 10");
        }
        if (rate.isPresent()) {
            RateLimit limit = parseRate(rate.get());
            Optional<String> burstText = args.value("burst");
            if (burstText.isPresent() && burstText.get().matches("\\+?\\d+")
                    && new java.math.BigInteger(burstText.get()).compareTo(java.math.BigInteger.valueOf(Integer.MAX_VALUE)) > 0) {
                // Beyond an int, but the bound that applies is the permits, not the int's
                throw new UsageException("--burst must be between 1 and the permits (" + limit.permits() + "), was " + burstText.get());
            }
            int burst = args.intValue("burst", 1, 1);
            b.rateLimit(burst == 1 ? limit : Arguments.applied("burst", () -> limit.withBurst(burst)));
        }
        Optional<Integer> concurrency = args.intValue("concurrency", 1);
        if (concurrency.isPresent()) {
            Arguments.applied("concurrency", () -> b.concurrencyLimit(concurrency.get()));
        }
        return b.build();
    }

    /** {@code 50/s}, {@code 1000/h}, {@code 5/500ms}, {@code 10/2m}: permits per period. */
    static RateLimit parseRate(String text) throws UsageException {
        int slash = text.indexOf('/');
        if (slash <= 0 || slash == text.length() - 1) {
            throw new UsageException("--rate must be N/PERIOD such as 50/s, 1000/h or 5/500ms, was '" + text + "'");
        }
        String count = text.substring(0, slash).strip();
        if (!count.matches("[+-]?\\d+")) {
            throw new UsageException("--rate must start with a whole number of starts (50/s), was '" + text + "'");
        }
        String period = text.substring(slash + 1).strip();
        Duration duration = switch (period) {
            case "s" -> Duration.ofSeconds(1);
            case "m" -> Duration.ofMinutes(1);
            case "h" -> Duration.ofHours(1);
            case "d" -> Duration.ofDays(1);
            default -> Arguments.parseDuration("--rate's period", period);
        };
        if (!duration.isPositive()) {
            // 0s parses as a duration; said as a negative one is, not in the library's terms
            throw new UsageException("--rate's period must be positive, was '" + period + "'; give one such as 1s");
        }
        // The count's bounds in the CLI's words (the library's name RateLimit.of's int): at least one start, at
        // most one per microsecond of the period, which also keeps it within an int.
        long maxPermits = Math.min(Integer.MAX_VALUE, Math.max(1, micros(duration)));
        java.math.BigInteger permits = new java.math.BigInteger(count);
        if (permits.signum() <= 0) {
            throw new UsageException("--rate's count must be at least 1, was " + permits + "; give starts per period such as 50/s");
        }
        if (permits.compareTo(java.math.BigInteger.valueOf(maxPermits)) > 0) {
            throw new UsageException("--rate's count is too large: at most " + maxPermits + " per " + period
                    + " (one start per microsecond), was " + permits + "; give a longer period for more");
        }
        int n = permits.intValueExact();
        return Arguments.applied("rate", () -> RateLimit.of(n, duration));
    }

    private static long micros(Duration d) {
        try {
            return Math.multiplyExact(d.getSeconds(), 1_000_000L) + d.getNano() / 1000;
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
