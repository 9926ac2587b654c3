package io.binomic.api;

/**
 * The priority of a message: an integer from {@value #MIN} to {@value #MAX}; within a queue, a
 * higher priority runs first. A message nobody gave a priority has {@value #DEFAULT}, the middle,
 * so that work can be put both above the ordinary (an interactive request) and below it (a bulk
 * re-index) without touching every other task. A task declares its default with
 * {@link Task.Builder#priority(int)}; one submit overrides it with {@link SubmitOptions.Builder#priority(int)}.
 *
 * <p>Lower priorities are not starved: every {@value #DEFAULT_FAIRNESS}th fetch of a queue
 * by a worker (the broker option {@value #FAIRNESS_OPTION}) starts at a level below the
 * highest, taking the lower levels in turn; {@code 0} makes the order strict.
 */
public final class Priority {
    /** The lowest priority. */
    public static final int MIN = 0;
    /** The highest priority. */
    public static final int MAX = 9;
    /** The priority of a message that was given none: the middle of the range. */
    public static final int DEFAULT = 5;
    /**
     * {@link BrokerConfig#options()} key: every how many fetches of a queue with several priority
     * levels in use one starts at a lower level ({@code 0}: never, strict priority). Defaults to
     * {@value #DEFAULT_FAIRNESS}.
     */
    public static final String FAIRNESS_OPTION = "priority.fairness";
    /** The default of {@link #FAIRNESS_OPTION}: one fetch in ten serves a lower level first. */
    public static final int DEFAULT_FAIRNESS = 10;

    private Priority() { }

    /**
     * {@code value} if it is a priority.
     *
     * @param field what the value is, as the message names it (such as {@code "task 'mail': priority"})
     * @throws IllegalArgumentException naming {@code field}, the range and the fix when it is not
     */
    public static int require(String field, int value) {
        if (value < MIN || value > MAX) {
            throw new IllegalArgumentException(field + " must be from " + MIN + " (lowest) to " + MAX + " (highest), was " + value
                    + "; leave it out for the default " + DEFAULT);
        }
        return value;
    }

    /** A priority written as text ({@code "7"}), or {@value #DEFAULT} when it is not one. */
    public static int parse(String text) {
        if (text != null && text.length() == 1) {
            int p = text.charAt(0) - '0';
            if (p >= MIN && p <= MAX) {
                return p;
            }
        }
        return DEFAULT;
    }

    /**
     * The {@value #FAIRNESS_OPTION} option of {@code config}: the default when absent.
     *
     * @throws IllegalArgumentException naming the option when it is not a number from 0
     */
    public static int fairness(BrokerConfig config) {
        String text = config.options().get(FAIRNESS_OPTION);
        if (text == null) {
            return DEFAULT_FAIRNESS;
        }
        try {
            int n = Integer.parseInt(text.strip());
            if (n >= 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // said below
        }
        throw new IllegalArgumentException("broker option " + FAIRNESS_OPTION + " must be a whole number from 0 (strict"
                + " priority) up, such as 10 (one fetch in ten starts at a lower priority), was '" + text + "'");
    }
}
