package io.binomic.core.internal.cli;

import io.binomic.core.Binomic;
import io.binomic.core.Dashboard;
import io.binomic.core.internal.process.DrainSignals;
import io.binomic.core.internal.web.DashboardServer;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/** {@code binomic dashboard}: serves the dashboard and /metrics of a broker's queues until SIGTERM or Ctrl-C. */
final class DashboardCommand extends Command {
    /** The environment variable holding the token: a secret stays off the command line, where {@code ps} shows it. */
    static final String TOKEN_ENV = "BINOMIC_DASHBOARD_TOKEN";

    DashboardCommand(Context cx) {
        super(cx, "dashboard", "Serve the dashboard and /metrics of the queues, until SIGTERM or Ctrl-C", List.of(
                BROKER, QUEUES,
                Option.value("port", "PORT", "port to listen on, 0 for any free one. Defaults to " + Dashboard.DEFAULT_PORT),
                Option.value("address", "ADDRESS", "address to listen on. Defaults to 127.0.0.1; another needs $" + TOKEN_ENV),
                Option.flag("read-only", "refuse every change (replay, purge, cancel, pause, resume)")), """
                Pages: overview, workers, jobs, dead letters, schedules, queues, batches and workflows
                by id; Prometheus scrapes /metrics. The token (at least 16 characters) comes from
                $BINOMIC_DASHBOARD_TOKEN; give it as 'Authorization: Bearer <token>', or open the
                dashboard once with ?token=<token>.
                This process runs no worker: its /metrics has the queues' depths, not task counters
                (a master's --dashboard-port has those of its worker JVMs).
                """);
    }

    /** The server's settings, checked: a bad one is a usage error; {@code tokenSource} says where a token is set. */
    static DashboardServer.Settings serverSettings(String address, int port, String token, boolean readOnly, String tokenSource)
            throws UsageException {
        try {
            return new DashboardServer.Settings(InetAddress.getByName(address), port, token, readOnly);
        } catch (UnknownHostException e) {
            throw new UsageException("dashboard address '" + address + "' is not an address of this host; give an IP address such as 127.0.0.1");
        } catch (IllegalArgumentException e) {
            throw new UsageException(e.getMessage().replace("needs a token: set one", "needs a token: set one in " + tokenSource));
        }
    }

    @Override
    int run(Arguments args) throws UsageException {
        int port = args.intValue("port", Dashboard.DEFAULT_PORT, 0);
        String address = args.value("address").orElse("127.0.0.1");
        String token = cx.env().get(TOKEN_ENV);
        boolean readOnly = args.has("read-only");
        serverSettings(address, port, token, readOnly, "$" + TOKEN_ENV); // checked before connecting: no broker touched
        Binomic binomic = cx.connect(args, args.list("queues"));
        Dashboard dashboard;
        try {
            Dashboard.Builder builder = binomic.dashboard().bindAddress(address).port(port).readOnly(readOnly);
            if (token != null) {
                builder.token(token);
            }
            dashboard = builder.start();
        } catch (IllegalArgumentException e) {
            binomic.close();
            throw new UsageException(e.getMessage());
        } catch (RuntimeException e) {
            binomic.close();
            throw e;
        }
        Stop stop = new Stop(dashboard, binomic);
        // SIGTERM, SIGINT and SIGHUP stop the dashboard on this thread, before the JVM's shutdown: the command then says it stopped
        // and exits 0, where a stop in a shutdown hook would race the logging system's own hook and exit 143 or 130.
        CountDownLatch signalled = new CountDownLatch(1);
        DrainSignals.install(signalled::countDown);
        // Any other end of the JVM (a JVM where the signals cannot be handled) closes it in this hook.
        Runtime.getRuntime().addShutdownHook(new Thread(stop::run, "binomic-dashboard-shutdown"));
        out.println("dashboard on " + DashboardServer.announcement(dashboard.uri(), readOnly) + "; stop with SIGTERM or Ctrl-C");
        out.flush();
        DrainSignals.awaitSignal(signalled); // only a signal ends the dashboard
        stop.run();
        return BinomicCli.EXIT_OK;
    }

    /** The dashboard's stop, done once: on SIGTERM, SIGINT or SIGHUP by the command's thread, on any other end of the JVM by its hook. */
    private final class Stop {
        private final Dashboard dashboard;
        private final Binomic binomic;
        private boolean done;

        Stop(Dashboard dashboard, Binomic binomic) {
            this.dashboard = dashboard;
            this.binomic = binomic;
        }

        synchronized void run() {
            if (done) {
                return;
            }
            done = true;
            dashboard.close();
            binomic.close();
            out.println("dashboard pid " + ProcessHandle.current().pid() + " stopped");
            out.flush();
        }
    }
}
