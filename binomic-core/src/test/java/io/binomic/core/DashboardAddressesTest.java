package io.binomic.core;

import static io.binomic.core.DashboardMetricsTest.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.binomic.api.Task;
import io.binomic.core.internal.web.DashboardServer;
import java.net.HttpURLConnection;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What the dashboard answers at addresses a user types: a job's page by path, a malformed or
 * unknown id, a page that does not exist, the icon a browser asks for; and the address it says it
 * listens on.
 */
class DashboardAddressesTest {
    record Job(int n) { }

    private final Task<Job, String> first = Task.builder("first", Job.class, String.class).queue("q-one").build();
    private final Task<Job, String> second = Task.builder("second", Job.class, String.class).queue("q-two").build();
    private Binomic binomic;

    @AfterEach
    void close() {
        if (binomic != null) {
            binomic.close();
        }
    }

    private Binomic started() {
        binomic = Binomic.builder().handle(first, j -> "one").handle(second, j -> "two").build().start();
        return binomic;
    }

    @Test
    void aMalformedJobIdIsABadRequestAsOnTheBatchAndWorkflowPages() throws Exception {
        try (Dashboard dashboard = started().dashboard().port(0).start()) {
            String page = get(dashboard.uri().resolve("jobs?id=nope"), null);
            assertTrue(page.startsWith("400 "), page);
            assertTrue(page.contains("<p class=\"error\" id=\"bad-id\">&#39;nope&#39; is not a job id"), page);
            assertTrue(get(dashboard.uri().resolve("batches?id=nope"), null).startsWith("400 "));
            assertTrue(get(dashboard.uri().resolve("jobs"), null).startsWith("200 "), "no id: the lookup form");
            String slash = get(dashboard.uri().resolve("jobs/"), null);
            assertTrue(slash.startsWith("200 ") && slash.contains("id=\"job-search\""), "/jobs/ is the lookup form, as /batches/ is: " + slash);
        }
    }

    @Test
    void aJobHasAPageAtItsOwnPathAsABatchAndAWorkflowHave() throws Exception {
        Binomic b = started();
        b.startWorker();
        var job = b.submit(second, new Job(1));
        job.await(Duration.ofSeconds(10));
        try (Dashboard dashboard = b.dashboard().port(0).start()) {
            String page = get(dashboard.uri().resolve("jobs/" + job.id()), null);
            assertTrue(page.startsWith("200 "), page);
            assertTrue(page.contains("<td id=\"job-state\">SUCCEEDED</td>"), page);
            assertTrue(page.contains("class=\"current\" id=\"nav-jobs\""), "the Jobs entry is the current one: " + page);
            assertTrue(get(dashboard.uri().resolve("jobs/nope"), null).startsWith("400 "));
        }
    }

    @Test
    void anUnknownJobNamesEveryQueueItWasLookedFor() throws Exception {
        try (Dashboard dashboard = started().dashboard().port(0).start()) {
            UUID unknown = UUID.randomUUID();
            String page = get(dashboard.uri().resolve("jobs?id=" + unknown), null);
            // found by an outside tester: an unknown batch or workflow id is a 404, an unknown job was a 200
            assertTrue(page.startsWith("404 "), page);
            assertTrue(get(dashboard.uri().resolve("jobs/" + unknown), null).startsWith("404 "));
            assertTrue(page.contains("<p class=\"error\" id=\"job-missing\">no status is kept for job " + unknown
                    + " on any of the 2 queues looked in (q-one, q-two): a wrong id"), page);
        }
    }

    @Test
    void anUnknownPathIsAPageOfTheDashboardWithAWayHome() throws Exception {
        try (Dashboard dashboard = started().dashboard().port(0).start()) {
            for (String path : new String[] {"nope", "jobs-list", "static/nope.css"}) {
                String page = get(dashboard.uri().resolve(path), null);
                assertTrue(page.startsWith("404 <!DOCTYPE html>"), page);
                assertTrue(page.contains("<p class=\"error\" id=\"no-page\">This dashboard has no page at /" + path + "."), page);
                assertTrue(page.contains("<a href=\"/\" id=\"home\">overview</a>"), page);
            }
        }
    }

    @Test
    void theIconABrowserAsksForIsServed() throws Exception {
        try (Dashboard dashboard = started().dashboard().port(0).start()) {
            assertTrue(get(dashboard.uri(), null).contains("<link rel=\"icon\" href=\"/static/favicon.svg\" type=\"image/svg+xml\">"));
            for (String path : new String[] {"favicon.ico", "static/favicon.svg"}) {
                HttpURLConnection c = (HttpURLConnection) dashboard.uri().resolve(path).toURL().openConnection();
                assertEquals(200, c.getResponseCode(), path);
                assertEquals("image/svg+xml", c.getContentType(), path);
                c.disconnect();
            }
        }
    }

    @Test
    void theAddressSaidIsOneToUseWithIpv6Short() {
        Binomic b = started();
        String token = "0123456789abcdef0123";
        try (Dashboard all = b.dashboard().bindAddress("0.0.0.0").port(0).token(token).start()) {
            int port = all.address().getPort();
            assertEquals("http://0.0.0.0:" + port + "/", all.uri().toString());
            assertEquals("http://0.0.0.0:" + port + "/ (all interfaces; metrics at http://0.0.0.0:" + port + "/metrics)",
                    DashboardServer.announcement(all.uri(), false));
        }
        try (Dashboard six = b.dashboard().bindAddress("::1").port(0).start()) {
            int port = six.address().getPort();
            assertEquals("http://[::1]:" + port + "/", six.uri().toString());
            assertEquals("http://[::1]:" + port + "/ (metrics at http://[::1]:" + port + "/metrics), read-only",
                    DashboardServer.announcement(six.uri(), true));
        }
    }
}
