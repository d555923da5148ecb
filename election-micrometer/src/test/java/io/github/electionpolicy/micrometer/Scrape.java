package io.github.electionpolicy.micrometer;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Prometheus text exposition, parsed as far as the docs tests need: families, samples and their labels. */
final class Scrape {

  private static final Pattern TYPE = Pattern.compile("^# TYPE (\\S+) (\\S+)$");
  private static final Pattern SAMPLE = Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)\\})? (\\S+)$");
  private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"");

  /** Family name to its type, e.g. {@code leader_election_transitions_total -> counter}. */
  final Map<String, String> types = new LinkedHashMap<>();
  /** Sample name to its labels (name to value) as last seen. */
  final Map<String, Map<String, String>> samples = new LinkedHashMap<>();
  /** Every line but the samples' values: comments whole, samples up to the space before the value. */
  final Set<String> shapes = new LinkedHashSet<>();

  Scrape(String text) {
    for (String line : text.split("\n")) {
      Matcher type = TYPE.matcher(line);
      Matcher sample = SAMPLE.matcher(line);
      if (type.matches()) {
        types.put(type.group(1), type.group(2));
        shapes.add(line);
      } else if (line.startsWith("#")) {
        shapes.add(line);
      } else if (sample.matches()) {
        Map<String, String> labels = new LinkedHashMap<>();
        if (sample.group(3) != null) {
          Matcher label = LABEL.matcher(sample.group(3));
          while (label.find()) {
            labels.put(label.group(1), label.group(2));
          }
        }
        samples.put(sample.group(1), labels);
        shapes.add(shape(line));
      }
    }
  }

  /** A sample line without its value; other lines as they are. */
  static String shape(String line) {
    return line.startsWith("#") || line.lastIndexOf(' ') < 0 ? line : line.substring(0, line.lastIndexOf(' '));
  }
}
