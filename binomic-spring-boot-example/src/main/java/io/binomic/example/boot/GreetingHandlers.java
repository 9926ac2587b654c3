package io.binomic.example.boot;

import io.binomic.api.TaskBinding;
import io.binomic.example.boot.Greetings.Greeting;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Binds the greeting task to a Spring bean's method: the starter's worker runs it. */
@Configuration(proxyBeanMethods = false)
public class GreetingHandlers {

    @Bean
    GreetingService greetingService() {
        return new GreetingService();
    }

    @Bean
    TaskBinding<Greeting, String> greet(GreetingService service) {
        return Greetings.GREET.handledBy(service::compose);
    }

    /** An ordinary Spring bean; in a real application, one with a mail client or a repository. */
    public static class GreetingService {
        public String compose(Greeting greeting) throws InterruptedException {
            Thread.sleep(greeting.workMillis());
            return "Hello " + greeting.name();
        }
    }
}
