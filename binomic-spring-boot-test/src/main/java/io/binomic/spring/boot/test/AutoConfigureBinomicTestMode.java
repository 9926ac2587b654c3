package io.binomic.spring.boot.test;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;

/**
 * Runs a Spring Boot test on Binomic's test mode ({@link io.binomic.core.testing.TestMode}) instead
 * of a broker: the application's {@code Binomic} bean is the test mode's, no worker runs, and the
 * test asserts what was submitted and runs the jobs when it chooses. {@code binomic.test-mode}
 * chooses how: {@code manual} (the default: jobs wait for {@code TestMode.drain()}) or
 * {@code inline} (each job runs inside its submit).
 *
 * <pre>{@code
 * @SpringBootTest
 * @AutoConfigureBinomicTestMode
 * class SignUpTest {
 *     @Autowired SignUp signUp;
 *     @Autowired TestMode jobs;
 *
 *     @Test
 *     void welcomesNewUsers() {
 *         signUp.register("ada@example.com");
 *         assertEquals(List.of(new Welcome("ada@example.com")), jobs.enqueued(Tasks.WELCOME));
 *         assertEquals(1, jobs.drain().succeeded());
 *     }
 * }
 * }</pre>
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@ImportAutoConfiguration
public @interface AutoConfigureBinomicTestMode {
}
