package io.binomic.core.internal.cli;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A plain-text table: a header row, columns padded to their widest cell, columns of numbers
 * right-aligned. A column with no number in it (only {@code -}, say) is text: a column must not
 * change its alignment when one row's {@code -} becomes a word.
 */
final class Table {
    private final List<String> headers;
    private final List<List<String>> rows = new ArrayList<>();

    Table(String... headers) { this.headers = List.of(headers); }

    Table row(Object... cells) {
        if (cells.length != headers.size()) {
            throw new IllegalArgumentException(cells.length + " cells for " + headers.size() + " columns");
        }
        rows.add(Arrays.stream(cells).map(cell -> printable(String.valueOf(cell))).toList());
        return this;
    }

    /**
     * {@code text} with every control character shown as {@code \\uXXXX}: an error message or a
     * payload (a handler's, a producer's) must not move the cursor, recolour or retitle the
     * operator's terminal, nor hide text behind a carriage return.
     */
    static String printable(String text) {
        StringBuilder b = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029' || (c >= '\u202a' && c <= '\u202e')) {
                if (b == null) {
                    b = new StringBuilder(text.length() + 16).append(text, 0, i);
                }
                b.append(String.format("\\u%04x", (int) c));
            } else if (b != null) {
                b.append(c);
            }
        }
        return b == null ? text : b.toString();
    }

    /** Prints the header and the rows; nothing at all for a table without rows. */
    void print(PrintStream out) {
        if (rows.isEmpty()) {
            return;
        }
        int columns = headers.size();
        int[] width = new int[columns];
        boolean[] numeric = new boolean[columns];
        for (int c = 0; c < columns; c++) {
            width[c] = headers.get(c).length();
            boolean onlyNumbers = true;
            boolean aNumber = false;
            for (List<String> row : rows) {
                String cell = row.get(c);
                width[c] = Math.max(width[c], cell.length());
                boolean number = cell.matches("-?\\d+");
                aNumber |= number;
                onlyNumbers &= number || cell.equals("-"); // "-" stands for a missing number
            }
            numeric[c] = onlyNumbers && aNumber;
        }
        print(out, headers, width, numeric);
        rows.forEach(row -> print(out, row, width, numeric));
    }

    private static void print(PrintStream out, List<String> cells, int[] width, boolean[] numeric) {
        StringBuilder line = new StringBuilder();
        for (int c = 0; c < cells.size(); c++) {
            if (c > 0) {
                line.append("  ");
            }
            String cell = cells.get(c);
            String pad = " ".repeat(width[c] - cell.length());
            line.append(numeric[c] ? pad + cell : cell + pad);
        }
        out.println(line.toString().stripTrailing());
    }
}
