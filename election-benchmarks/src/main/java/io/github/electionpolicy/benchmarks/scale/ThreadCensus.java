package io.github.electionpolicy.benchmarks.scale;

import java.util.Map;
import java.util.TreeMap;

/**
 * The live threads of this JVM at one instant, grouped by name with digits folded ({@code election-io-3} counts
 * as {@code election-io-#}). Three classes matter: the library's own (name prefix {@code election-}), the
 * embedded mock server's (Vert.x and the mock server's own, which a real deployment does not have), and all
 * the others (HTTP client, fabric8, stock's elector, the JVM). The mock server's are Vert.x's, its watchdog's and
 * the unnamed {@code pool-#-thread-#} executors it opens per watch to send events. Immutable.
 *
 * @param groups thread count by folded name
 */
public record ThreadCensus(Map<String, Integer> groups) {

  /** The prefix of every thread the library starts. */
  public static final String LIBRARY_PREFIX = "election-";

  /**
   * Counts the live threads now.
   *
   * @return the census
   */
  public static ThreadCensus now() {
    Map<String, Integer> groups = new TreeMap<>();
    for (Thread t : Thread.getAllStackTraces().keySet()) {
      // The JVM starts the attach listener when jstack attaches: the observer's thread, not the run's.
      if (t.isAlive() && !t.getName().equals("Attach Listener")) {
        groups.merge(fold(t.getName()), 1, Integer::sum);
      }
    }
    return new ThreadCensus(Map.copyOf(groups));
  }

  /**
   * Threads of the library ({@value #LIBRARY_PREFIX} prefix).
   *
   * @return the count
   */
  public int library() {
    return count(name -> name.startsWith(LIBRARY_PREFIX));
  }

  /**
   * Threads that belong to the in-JVM mock server, excluded from {@link #excludingServer()}.
   *
   * @return the count
   */
  public int server() {
    return count(ThreadCensus::isServer);
  }

  /**
   * Every thread but the embedded mock server's: what the process would have against a real API server.
   *
   * @return the count
   */
  public int excludingServer() {
    return count(name -> !isServer(name));
  }

  /**
   * The groups outside the mock server whose count grew from {@code before} to this census, with the growth.
   *
   * @param before the earlier census
   * @return folded name to added count, positive only
   */
  public Map<String, Integer> addedSince(ThreadCensus before) {
    Map<String, Integer> added = new TreeMap<>();
    groups.forEach((name, n) -> {
      int was = before.groups.getOrDefault(name, 0);
      if (n > was && !isServer(name)) {
        added.put(name, n - was);
      }
    });
    return added;
  }

  static boolean isServer(String foldedName) {
    return foldedName.startsWith("vert.x") || foldedName.startsWith("vertx") || foldedName.contains("mockwebserver")
        || foldedName.startsWith("tcp-proxy") || foldedName.startsWith("MockWebServer")
        || foldedName.startsWith("mock-server")
        // The mock server sends each watch's events on an executor of its own (Executors.defaultThreadFactory
        // names); its watchdog names them when it interrupts one. Client and library threads are all named.
        || foldedName.equals("pool-#-thread-#");
  }

  private int count(java.util.function.Predicate<String> which) {
    return groups.entrySet().stream().filter(e -> which.test(e.getKey())).mapToInt(Map.Entry::getValue).sum();
  }

  private static String fold(String name) {
    // Runner-named callback threads carry the Lease: fold that too, so a thousand of them are one group.
    String folded = name.replaceAll("\\[[^\\]]*\\]", "[…]");
    return folded.replaceAll("\\d+", "#");
  }
}
