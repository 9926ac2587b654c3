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
 * a page cannot show an API that does not exist. The examples of a page read like a notebook:
 * its fragments (blocks that are not whole files) are, in page order, one method body, so a block
 * may use what an earlier block of the page declared. A block that is a whole file (it starts with
 * {@code package} or {@code import}, or declares only types) compiles as a file of the page's
 * package. A {@code module} declaration may require only real Binomic modules. What a page's
 * examples use without showing it (a mail client, a report builder) is declared in HTML comments
 * the page does not render: {@code <!-- java-context ... -->} (statements put before the page's
 * fragments) and {@code <!-- java-types ... -->} (types of the page's package). Imports are those
 * a user of the guide has: io.binomic.api, io.binomic.api.spi, io.binomic.core,
 * io.binomic.core.testing, java.time, java.util, java.util.concurrent.
 */
class DocExamplesTest {
    private static final Pattern BLOCK = Pattern.compile("(?m)^```java\\s*\\n(.*?)^```", Pattern.DOTALL);
    private static final Pattern HIDDEN = Pattern.compile("<!-- java-(context|types)\\s*\\n(.*?)-->", Pattern.DOTALL);
    private static final Pattern TYPE_LINE = Pattern.compile("(public |final |abstract |sealed |non-sealed |static )*(class|record|interface|enum) \\w+.*");
    private static final Pattern TYPE_NAME = Pattern.compile("(?m)^(?:public |final |abstract |sealed |non-sealed )*(?:class|record|interface|enum) (\\w+)");
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

        boolean isModule() {
            return code.strip().startsWith("module ");
        }

        /** A whole file: starts with package or import, or every line at the left margin starts a type or closes one. */
        boolean isWholeFile() {
            String stripped = code.strip();
            if (stripped.startsWith("package ") || stripped.startsWith("import ")) {
                return true;
            }
            return code.lines().filter(l -> !l.isBlank() && !Character.isWhitespace(l.charAt(0)))
                    .filter(l -> !l.startsWith("}") && !l.startsWith("//") && !l.startsWith("@") && !l.startsWith("/*") && !l.startsWith("*"))
                    .allMatch(l -> TYPE_LINE.matcher(l).matches());
        }
    }

    record Page(Path path, String context, String types, List<Example> examples) { }

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

    static List<Page> pages() throws IOException {
        Path root = repositoryRoot();
        List<Path> paths = new ArrayList<>();
        paths.add(root.resolve("README.md"));
        try (Stream<Path> docs = Files.list(root.resolve("module-info-docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(paths::add);
        }
        List<Page> pages = new ArrayList<>();
        for (Path path : paths) {
            String text = Files.readString(path);
            List<Example> examples = new ArrayList<>();
            Matcher m = BLOCK.matcher(text);
            while (m.find()) {
                int line = (int) text.substring(0, m.start()).lines().count() + 2;
                examples.add(new Example(path, line, m.group(1)));
            }
            StringBuilder context = new StringBuilder();
            StringBuilder types = new StringBuilder();
            Matcher hidden = HIDDEN.matcher(text);
            while (hidden.find()) {
                (hidden.group(1).equals("context") ? context : types).append(hidden.group(2)).append("\n");
            }
            pages.add(new Page(path, context.toString(), types.toString(), examples));
        }
        return pages;
    }

    /** A merge left half-done in a page once (two versions of a table's rows between conflict markers). */
    @Test
    void noPageHoldsMergeConflictMarkers() throws IOException {
        Pattern marker = Pattern.compile("^(<<<<<<< |=======$|>>>>>>> )", Pattern.MULTILINE);
        List<String> found = new ArrayList<>();
        for (Page page : pages()) {
            Matcher m = marker.matcher(Files.readString(page.path()));
            while (m.find()) {
                found.add(page.path().getFileName() + ": " + m.group(1).strip());
            }
        }
        assertEquals(List.of(), found, "resolve the merge in these pages");
    }

    @Test
    void everyJavaExampleInTheGuideCompiles() throws IOException {
        List<Page> pages = pages();
        int count = pages.stream().mapToInt(p -> p.examples().size()).sum();
        assertTrue(count >= 10, "found only " + count + " examples: is the extraction broken?");
        Path dir = Files.createTempDirectory("doc-examples");
        List<Path> sources = new ArrayList<>();
        int pageNumber = 0;
        for (Page page : pages) {
            pageNumber++;
            String pkg = "page" + pageNumber;
            Path pkgDir = Files.createDirectories(dir.resolve(pkg));
            StringBuilder body = new StringBuilder(page.context());
            int n = 0;
            for (Example example : page.examples()) {
                n++;
                if (example.isModule()) {
                    checkModule(example);
                } else if (example.isWholeFile()) {
                    String code = example.code().strip().startsWith("package ")
                            ? example.code().replaceFirst("package [\\w.]+;", "package " + pkg + ";")
                            : "package " + pkg + ";\n" + (example.code().strip().startsWith("import ") ? "" : IMPORTS) + example.code();
                    Matcher type = TYPE_NAME.matcher(example.code());
                    Path source = pkgDir.resolve((type.find() ? type.group(1) : "Example" + n) + ".java");
                    Files.writeString(source, code + "\n// " + example.where() + "\n");
                    sources.add(source);
                } else {
                    body.append("// ").append(example.where()).append("\n").append(example.code()).append("\n");
                }
            }
            Path source = pkgDir.resolve("PageExamples.java");
            Files.writeString(source, "package " + pkg + ";\n" + IMPORTS + page.types() + "\n// " + page.path().getFileName()
                    + "\nclass PageExamples {\n    void examples() throws Exception {\n" + body + "\n    }\n}\n");
            sources.add(source);
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        String classPath = System.getProperty("java.class.path") + java.io.File.pathSeparator
                + System.getProperty("jdk.module.path", "");
        List<String> args = new ArrayList<>(List.of("-d", dir.resolve("classes").toString(), "-classpath", classPath,
                "--release", "25", "--enable-preview", "-proc:none", "-Xlint:none", "-nowarn", "-Xmaxerrs", "200"));
        sources.forEach(source -> args.add(source.toString()));
        StringWriter errors = new StringWriter();
        int exit = javac.run(null, null, new java.io.PrintStream(new java.io.OutputStream() {
            @Override
            public void write(int b) {
                errors.write(b);
            }
        }, true), args.toArray(String[]::new));
        assertEquals(0, exit, "doc examples do not compile (the lines '// PAGE:LINE' in each source say where a block starts):\n"
                + errors + "\nsources in " + dir);
    }

    private static void checkModule(Example module) {
        List<String> binomicModules = module.code().lines().map(String::strip).filter(l -> l.startsWith("requires "))
                .map(l -> l.replaceAll("//.*", "").replace("requires ", "").replace("transitive ", "").replace(";", "").strip())
                .filter(name -> name.startsWith("io.binomic")).toList();
        for (String required : binomicModules) {
            assertTrue(List.of("io.binomic.api", "io.binomic.core", "io.binomic.redis").contains(required),
                    module.where() + ": requires " + required + ", which is not a Binomic module");
        }
    }
}
