package io.binomic.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Test;

/**
 * Every Java example in README.md and module-info-docs/*.md compiles against the modules as built:
 * a page cannot show an API that does not exist. A block that is a whole file (it starts with
 * {@code package}, {@code import} or a type) compiles as it is; any other block compiles as the
 * body of a method (local records and classes are allowed there) with the imports a user of
 * the guide would have: io.binomic.api, io.binomic.api.spi, io.binomic.core, io.binomic.core.testing,
 * java.time, java.util, java.util.concurrent. A {@code module} declaration is checked for the
 * Binomic modules it requires. So examples must be self-contained: define what they use.
 */
class DocExamplesTest {
    private static final Pattern BLOCK = Pattern.compile("(?m)^```java\\s*\\n(.*?)^```", Pattern.DOTALL);
    private static final Pattern WHOLE_FILE = Pattern.compile(
            "\\A\\s*(package |import |(public |final |abstract |sealed )*(class|record|interface|enum) )");
    private static final Pattern TYPE_NAME = Pattern.compile("(?m)^(?:public |final |abstract |sealed )*(?:class|record|interface|enum) (\\w+)");
    private static final String IMPORTS = """
            import io.binomic.api.*;
            import io.binomic.api.spi.*;
            import io.binomic.core.*;
            import io.binomic.core.testing.*;
            import java.time.*;
            import java.util.*;
            import java.util.concurrent.*;
            """;

    record Example(Path page, int line, String code) {
        String where() {
            return page.getFileName() + ":" + line;
        }
    }

    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.exists(dir.resolve("module-info-docs"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("module-info-docs not found above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }

    static List<Example> examples() throws IOException {
        Path root = repositoryRoot();
        List<Path> pages = new ArrayList<>();
        pages.add(root.resolve("README.md"));
        try (Stream<Path> docs = Files.list(root.resolve("module-info-docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<Example> examples = new ArrayList<>();
        for (Path page : pages) {
            String text = Files.readString(page);
            Matcher m = BLOCK.matcher(text);
            while (m.find()) {
                int line = (int) text.substring(0, m.start()).lines().count() + 2;
                examples.add(new Example(page, line, m.group(1)));
            }
        }
        return examples;
    }

    @Test
    void everyJavaExampleInTheGuideCompiles() throws IOException {
        List<Example> examples = examples();
        assertTrue(examples.size() >= 10, "found only " + examples.size() + " examples: is the extraction broken?");
        Path dir = Files.createTempDirectory("doc-examples");
        List<Path> sources = new ArrayList<>();
        List<Example> modules = new ArrayList<>();
        int n = 0;
        for (Example example : examples) {
            n++;
            String code = example.code();
            if (code.strip().startsWith("module ")) {
                modules.add(example);
                continue;
            }
            Path source;
            if (WHOLE_FILE.matcher(code).lookingAt()) {
                Matcher type = TYPE_NAME.matcher(code);
                String name = type.find() ? type.group(1) : "Example" + n;
                Path pkgDir = dir.resolve("ex" + n);
                Files.createDirectories(pkgDir);
                String withPackage = code.strip().startsWith("package ") ? code.replaceFirst("package [\\w.]+;", "package ex" + n + ";")
                        : "package ex" + n + ";\n" + code;
                source = pkgDir.resolve(name + ".java");
                Files.writeString(source, "// " + example.where() + "\n" + withPackage);
            } else {
                String className = "Example" + n;
                source = dir.resolve(className + ".java");
                Files.writeString(source, IMPORTS + "// " + example.where() + "\nclass " + className
                        + " {\n    void example() throws Exception {\n" + code + "\n    }\n}\n");
            }
            sources.add(source);
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        String classPath = System.getProperty("java.class.path") + java.io.File.pathSeparator
                + System.getProperty("jdk.module.path", "");
        List<String> args = new ArrayList<>(List.of("-d", dir.resolve("classes").toString(), "-classpath", classPath,
                "--release", "25", "--enable-preview", "-proc:none", "-Xlint:none", "-nowarn"));
        sources.forEach(s -> args.add(s.toString()));
        StringWriter errors = new StringWriter();
        int exit = javac.run(null, null, new java.io.PrintStream(new java.io.OutputStream() {
            @Override
            public void write(int b) {
                errors.write(b);
            }
        }, true), args.toArray(String[]::new));
        assertEquals(0, exit, "doc examples do not compile (each source starts with the page:line of its block):\n"
                + annotate(errors.toString(), sources));

        for (Example module : modules) {
            List<String> binomicModules = module.code().lines().map(String::strip).filter(l -> l.startsWith("requires "))
                    .map(l -> l.replace("requires ", "").replace("transitive ", "").replace(";", "").strip())
                    .filter(name -> name.startsWith("io.binomic")).toList();
            for (String required : binomicModules) {
                assertTrue(List.of("io.binomic.api", "io.binomic.core", "io.binomic.redis").contains(required),
                        module.where() + ": requires " + required + ", which is not a Binomic module");
            }
        }
    }

    private static String annotate(String errors, List<Path> sources) {
        StringBuilder out = new StringBuilder(errors);
        for (Path source : sources) {
            try {
                String first = Files.readAllLines(source).stream().filter(l -> l.startsWith("// ")).findFirst().orElse("");
                out.append("\n").append(source.getFileName()).append(" <- ").append(first);
            } catch (IOException e) {
                out.append("\n").append(source).append(": ").append(e.getMessage());
            }
        }
        return out.toString();
    }
}
