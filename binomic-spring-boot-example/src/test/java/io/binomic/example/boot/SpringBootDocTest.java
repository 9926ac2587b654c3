package io.binomic.example.boot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * spring-boot.md shows this module's files, not copies that could drift: each whole file the page
 * shows is one of the example's sources, and its properties table is the one the configuration
 * processor's metadata gives.
 */
class SpringBootDocTest {
    private static final Pattern BLOCK = Pattern.compile("(?m)^```(Java|yaml)\\s*\\n(.*?)^```", Pattern.DOTALL);

    private static Path root() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("module-info-docs"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("module-info-docs not found above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    private static String page() throws IOException {
        return Files.readString(root().resolve("module-info-docs/spring-boot.md"));
    }

    @Test
    void everyWholeFileOnThePageIsTheExamplesOwn() throws IOException {
        Path main = root().resolve("binomic-spring-boot-example/src/main");
        List<String> sources = new ArrayList<>();
        try (Stream<Path> files = Files.walk(main)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                sources.add(Files.readString(f).strip());
            }
        }
        Matcher m = BLOCK.matcher(page());
        int files = 0;
        while (m.find()) {
            String block = m.group(2).strip();
            if (m.group(1).equals("yaml") || block.startsWith("package ")) {
                files++;
                assertThat(sources).as("a file of binomic-spring-boot-example/src/main").contains(block);
            }
        }
        assertThat(files).as("files the page shows: the application, the tasks, the handlers, the controller, application.yml")
                .isEqualTo(5);
    }

    @Test
    void thePropertiesTableIsTheMetadatas() throws IOException {
        List<JsonNode> properties = new ArrayList<>();
        for (URL url : Collections.list(getClass().getClassLoader().getResources("META-INF/spring-configuration-metadata.json"))) {
            try (InputStream in = url.openStream()) {
                for (JsonNode p : new ObjectMapper().readTree(in).path("properties")) {
                    if (p.path("name").asText().startsWith("binomic.")) {
                        properties.add(p);
                    }
                }
            }
        }
        properties.sort(Comparator.comparing(p -> p.path("name").asText()));
        StringBuilder table = new StringBuilder("| property | default | description |\n|---|---|---|\n");
        for (JsonNode p : properties) {
            JsonNode d = p.get("defaultValue");
            table.append("| `").append(p.path("name").asText()).append("` | ")
                    .append(d == null ? "—" : "`" + d.asText() + "`").append(" | ")
                    .append(p.path("description").asText().replace('\n', ' ')).append(" |\n");
        }
        assertThat(properties).as("the starter's properties in the metadata").hasSizeGreaterThan(20);
        assertThat(page()).as("spring-boot.md's properties table, regenerated from the metadata").contains(table);
    }
}
