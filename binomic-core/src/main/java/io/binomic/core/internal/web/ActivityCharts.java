package io.binomic.core.internal.web;

import io.binomic.api.spi.ActivityBucket;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.ToLongFunction;

/**
 * The overview's charts of the last hour, one bar per minute, drawn on the server as inline SVG:
 * no script, no chart library, nothing fetched from elsewhere, and the page's Content-Security-Policy
 * needs no exception (colours come from classes in dashboard.css, never from style attributes).
 */
final class ActivityCharts {
    static final int MINUTES = 60;
    private static final int WIDTH = 600;
    private static final int HEIGHT = 120;
    private static final DateTimeFormatter HOUR_MINUTE = DateTimeFormatter.ofPattern("HH:mm").withZone(ZoneOffset.UTC);

    private ActivityCharts() { }

    /**
     * One stacked series of a chart: its label, its CSS class, the height of its bar in a bucket,
     * and the value its tooltip gives (the same, but for a series drawn above another).
     */
    private record Series(String label, String cssClass, ToLongFunction<ActivityBucket> value, ToLongFunction<ActivityBucket> shown) {
        Series(String label, String cssClass, ToLongFunction<ActivityBucket> value) { this(label, cssClass, value, value); }
    }

    /** The buckets of the last {@link #MINUTES} minutes up to {@code now}, every queue added up, one per minute (empty ones included). */
    static List<ActivityBucket> lastHour(List<List<ActivityBucket>> perQueue, Instant now) {
        Instant last = ActivityBucket.minuteOf(now);
        Map<Instant, ActivityBucket> byMinute = new TreeMap<>();
        for (int i = MINUTES - 1; i >= 0; i--) {
            Instant m = last.minusSeconds(60L * i);
            byMinute.put(m, ActivityBucket.empty(m));
        }
        perQueue.stream().flatMap(List::stream).forEach(b -> byMinute.computeIfPresent(b.minute(), (m, sum) -> sum.plus(b)));
        return new ArrayList<>(byMinute.values());
    }

    /** Appends the three charts (throughput, failures, latency) of {@code minutes}. */
    static void render(Html h, List<ActivityBucket> minutes) {
        chart(h, "chart-throughput", "Executions per minute", "", minutes, List.of(
                new Series("succeeded", "s-ok", ActivityBucket::succeeded),
                new Series("failed", "s-bad", ActivityBucket::failed)));
        chart(h, "chart-failures", "Retries and dead letters per minute", "", minutes, List.of(
                new Series("retried", "s-warn", ActivityBucket::retried),
                new Series("dead-lettered", "s-bad", ActivityBucket::deadLettered)));
        // The longest run is drawn above the mean (the bar's top is the longest), its tooltip says the longest itself.
        // Microseconds when the hour's longest run is under 10 ms: in milliseconds, sub-millisecond
        // tasks rounded to 0 and the chart of a busy queue was empty.
        long hourLongest = minutes.stream().mapToLong(ActivityBucket::maxRunNanos).max().orElse(0);
        long perUnit = hourLongest < 10_000_000 ? 1_000 : 1_000_000;
        String unit = perUnit == 1_000 ? " µs" : " ms";
        chart(h, "chart-latency", "Run time per minute," + unit, unit, minutes, List.of(
                new Series("mean", "s-ok", b -> b.meanRun().toNanos() / perUnit),
                new Series("longest", "s-muted", b -> Math.max(0, b.maxRunNanos() / perUnit - b.meanRun().toNanos() / perUnit),
                        b -> b.maxRunNanos() / perUnit)));
    }

    private static void chart(Html h, String id, String title, String unit, List<ActivityBucket> minutes, List<Series> series) {
        long top = 1;
        long[] totals = new long[series.size()];
        for (ActivityBucket b : minutes) {
            long stacked = 0;
            for (int s = 0; s < series.size(); s++) {
                long v = series.get(s).value().applyAsLong(b);
                stacked += v;
                totals[s] += v;
            }
            top = Math.max(top, stacked);
        }
        h.raw("<figure class=\"chart\" id=\"").raw(id).raw("\"");
        if (unit.isEmpty()) { // counts add up over the hour; times do not
            for (int s = 0; s < series.size(); s++) {
                h.raw(" data-total-" + series.get(s).label() + "=\"" + totals[s] + "\"");
            }
        } else {
            long runs = minutes.stream().mapToLong(ActivityBucket::executions).sum();
            long runNanos = minutes.stream().mapToLong(ActivityBucket::runNanos).sum();
            long longest = minutes.stream().mapToLong(ActivityBucket::maxRunNanos).max().orElse(0);
            h.raw(" data-hour-mean-ms=\"").raw(Long.toString(runs == 0 ? 0 : Duration.ofNanos(runNanos / runs).toMillis()))
                    .raw("\" data-hour-longest-ms=\"").raw(Long.toString(Duration.ofNanos(longest).toMillis())).raw("\"");
        }
        h.raw("><figcaption>").text(title).raw("</figcaption><svg viewBox=\"0 0 " + (WIDTH + 60) + " " + (HEIGHT + 20)
                + "\" role=\"img\" aria-label=\"").text(title).raw("\">");
        h.raw("<line class=\"axis\" x1=\"0\" y1=\"" + HEIGHT + "\" x2=\"" + WIDTH + "\" y2=\"" + HEIGHT + "\"/>");
        h.raw("<text class=\"tick\" x=\"" + (WIDTH + 4) + "\" y=\"10\">").text(top + unit).raw("</text>");
        h.raw("<text class=\"tick\" x=\"" + (WIDTH + 4) + "\" y=\"" + HEIGHT + "\">0</text>");
        double slot = (double) WIDTH / minutes.size();
        for (int i = 0; i < minutes.size(); i++) {
            ActivityBucket b = minutes.get(i);
            double base = HEIGHT;
            StringBuilder tip = new StringBuilder(HOUR_MINUTE.format(b.minute())).append(" UTC");
            for (Series s : series) {
                tip.append(", ").append(s.shown().applyAsLong(b)).append(unit).append(' ').append(s.label());
            }
            for (Series s : series) {
                long v = s.value().applyAsLong(b);
                if (v == 0) {
                    continue;
                }
                double height = Math.max(1, v * (double) HEIGHT / top);
                base -= height;
                h.raw("<rect class=\"" + s.cssClass() + "\" data-minute=\"" + HOUR_MINUTE.format(b.minute()) + "\" data-value=\"" + v
                        + "\" x=\"" + fmt(i * slot + 1) + "\" y=\"" + fmt(base) + "\" width=\"" + fmt(Math.max(1, slot - 2))
                        + "\" height=\"" + fmt(height) + "\"><title>").text(tip).raw("</title></rect>");
            }
        }
        h.raw("<text class=\"tick\" x=\"0\" y=\"" + (HEIGHT + 16) + "\">").text(HOUR_MINUTE.format(minutes.getFirst().minute()))
                .raw("</text><text class=\"tick\" x=\"" + (WIDTH - 34) + "\" y=\"" + (HEIGHT + 16) + "\">")
                .text(HOUR_MINUTE.format(minutes.getLast().minute())).raw("</text></svg><p class=\"legend\">");
        for (int s = 0; s < series.size(); s++) {
            h.raw("<span class=\"key ").raw(series.get(s).cssClass()).raw("\"></span>").text(series.get(s).label());
            if (unit.isEmpty()) {
                h.raw(" <span class=\"total\">").text(totals[s]).raw("</span>");
            }
            h.raw(" ");
        }
        h.raw("</p></figure>");
    }

    private static String fmt(double v) { return String.format(Locale.ROOT, "%.1f", v); }
}
