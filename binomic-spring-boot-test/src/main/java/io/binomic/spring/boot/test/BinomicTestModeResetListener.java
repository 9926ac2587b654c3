package io.binomic.spring.boot.test;

import io.binomic.core.testing.TestMode;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.support.AbstractTestExecutionListener;

/**
 * Resets the context's {@link TestMode} ({@link TestMode#reset()}) before each test method: Spring
 * caches a test's application context for the next test with the same configuration, and the test
 * mode bean in it would otherwise still hold the jobs the earlier tests submitted. Registered in
 * {@code META-INF/spring.factories}, so every test on the class path of this artifact gets it; a
 * context without a test mode, or not loaded yet, is left alone.
 */
public class BinomicTestModeResetListener extends AbstractTestExecutionListener {

    /** After dependency injection, before the test's own {@code @BeforeEach} methods. */
    @Override
    public int getOrder() {
        return 2100;
    }

    @Override
    public void beforeTestMethod(TestContext testContext) {
        if (testContext.hasApplicationContext()) {
            testContext.getApplicationContext().getBeanProvider(TestMode.class).ifAvailable(TestMode::reset);
        }
    }
}
