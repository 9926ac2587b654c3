package io.binomic.example.boot;

import io.binomic.api.JobHandle;
import io.binomic.api.JobState;
import io.binomic.core.Binomic;
import io.binomic.example.boot.Greetings.Greeting;
import java.time.Duration;
import java.util.UUID;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** Submits greetings and reports their state: the producer side, in the same application. */
@RestController
public class GreetingController {
    private final Binomic binomic;

    public GreetingController(Binomic binomic) {
        this.binomic = binomic;
    }

    /** Submits a greeting and answers its job id at once; a worker runs it. */
    @PostMapping("/greetings")
    public String submit(@RequestParam("name") String name,
                         @RequestParam(name = "workMillis", defaultValue = "0") long workMillis) {
        JobHandle<String> job = binomic.submit(Greetings.GREET, new Greeting(name, workMillis));
        return job.id().toString();
    }

    /**
     * The job's state, and its result once it succeeded: {@code SUCCEEDED Hello Ada}. The status
     * holds the result as JSON ({@code "Hello Ada"}); the handle decodes it as the task's type.
     */
    @GetMapping("/greetings/{id}")
    public String status(@PathVariable("id") UUID id) {
        JobHandle<String> job = binomic.job(Greetings.GREET, id);
        JobState state = job.status().state();
        return state == JobState.SUCCEEDED ? state + " " + job.await(Duration.ofSeconds(5)) : state.toString();
    }
}
