package io.binomic.example.boot;

import io.binomic.api.Task;
import java.time.Duration;

/** The task definitions: what producers submit and the worker runs, shared by both. */
public final class Greetings {
    /** A greeting to compose; {@code workMillis} stands for the work a real task does. */
    public record Greeting(String name, long workMillis) { }

    public static final Task<Greeting, String> GREET = Task.builder("greet", Greeting.class, String.class)
            .queue("greetings")
            .timeout(Duration.ofSeconds(30))
            .build();

    private Greetings() { }
}
