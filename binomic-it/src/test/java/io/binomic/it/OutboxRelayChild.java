package io.binomic.it;

import io.binomic.api.BinomicConfig;
import io.binomic.core.Binomic;
import io.binomic.jdbc.OutboxRelay;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A relay in its own JVM that stops between the store and the delete: its connection holds every
 * {@code DELETE} of the outbox, after printing {@code STORED BEFORE DELETE}, until the test
 * SIGKILLs the JVM. Arguments: the Redis URL and the JDBC URL.
 */
public final class OutboxRelayChild {
    private OutboxRelayChild() { }

    public static void main(String[] args) throws Exception {
        BinomicConfig config = BinomicConfig.builder().brokerUrl(args[0]).schedulePeriodicTasks(false).build();
        PGSimpleDataSource postgres = new PGSimpleDataSource();
        postgres.setURL(args[1]);
        DataSource stalling = (DataSource) Proxy.newProxyInstance(OutboxRelayChild.class.getClassLoader(),
                new Class<?>[] {DataSource.class}, (p, m, a) -> {
                    Object result = invoke(m, postgres, a);
                    return m.getName().equals("getConnection") ? stallingDeletes((Connection) result) : result;
                });
        Binomic binomic = Binomic.builder().config(config).build().start();
        OutboxRelay relay = OutboxRelay.builder(binomic, stalling).batchSize(1000).listen(false).build();
        System.out.println("WORKER READY");
        System.out.flush();
        while (true) {
            relay.relayOnce();
            Thread.sleep(100);
        }
    }

    private static Connection stallingDeletes(Connection real) {
        return (Connection) Proxy.newProxyInstance(OutboxRelayChild.class.getClassLoader(), new Class<?>[] {Connection.class},
                (p, m, a) -> {
                    if (m.getName().equals("prepareStatement") && a != null && String.valueOf(a[0]).startsWith("DELETE")) {
                        System.out.println("STORED BEFORE DELETE");
                        System.out.flush();
                        Thread.sleep(Long.MAX_VALUE);
                    }
                    return invoke(m, real, a);
                });
    }

    private static Object invoke(Method m, Object target, Object[] a) throws Throwable {
        try {
            return m.invoke(target, a);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
