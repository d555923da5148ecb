package io.github.electionpolicy.benchmarks.scale;

import io.github.electionpolicy.benchmarks.failover.BenchmarkSettings;
import io.github.electionpolicy.benchmarks.failover.Timings;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What one run of the scale benchmark does, parsed from {@code key=value} arguments. Immutable and thread-safe.
 *
 * <p>Keys: {@code elections} (how many Leases, each with its own runner, as a list: {@code 1,100}),
 * {@code timings} ({@code default,fast}), {@code contenders} ({@code stock,ours}), {@code followers}
 * ({@code false}: one replica per Lease; {@code true} adds a second replica to every Lease), {@code settle.ms}
 * (the window after every election leads over which the thread peak is taken; default three retry periods,
 * at least 1 s), {@code steady.ms} (when, counted from the moment every election leads, the steady-state count
 * starts: the peak over two retry periods, at least 1 s, from then on; default 15000, past the 10 s for which the
 * library's pools keep an idle thread, so a start-up burst's threads have retired; 0 skips it), {@code heap.samples} (3), {@code lead.timeout.s} (how long to wait for every election to lead;
 * default 120), {@code kubeconfig} (none: the embedded mock API server; else a real one, as the failover
 * benchmark's setting of that name, validated the same way), {@code client.threads} (0: the shared client as
 * fabric8 builds it, whose JDK HTTP client and task executor are unbounded cached pools; N: each of the two a fixed
 * pool of N threads, as a user running many elections would configure it).
 *
 * <pre>{@code
 * ScaleSettings settings = ScaleSettings.parse("elections=1,100", "timings=default");
 * }</pre>
 *
 * @param elections how many elections per run, one run per value
 * @param timings which timings to run
 * @param contenders which implementations, by column name
 * @param followers whether each Lease gets a second replica
 * @param settle fixed settle window, or empty for the default per timings
 * @param steady when the steady-state count starts after every election leads; zero skips it
 * @param heapSamples how many heap samples (each after a GC) before and after
 * @param leadTimeout how long to wait for every election to have a leader
 * @param kubeconfig the kubeconfig of a real API server, or empty for the mock
 * @param clientThreads 0 for fabric8's default executors of the shared client, else the size of each of its two
 */
public record ScaleSettings(
    List<Integer> elections,
    List<Timings> timings,
    List<String> contenders,
    boolean followers,
    Optional<Duration> settle,
    Duration steady,
    int heapSamples,
    Duration leadTimeout,
    Optional<Path> kubeconfig,
    int clientThreads) {

  /** The implementations this benchmark knows, in column order. */
  public static final List<String> KNOWN_CONTENDERS = List.of("stock", "ours");

  /**
   * Checks and copies the values.
   *
   * @param elections how many elections per run
   * @param timings which timings to run
   * @param contenders which implementations
   * @param followers whether each Lease gets a second replica
   * @param settle fixed settle window, or empty for the default
   * @param steady when the steady-state count starts; zero skips it
   * @param heapSamples heap samples, at least 1
   * @param leadTimeout wait for every election to lead, positive
   * @param kubeconfig a real API server's kubeconfig, or empty
   * @param clientThreads 0, or the size of each of the shared client's two executors
   * @throws IllegalArgumentException when a value is out of range
   */
  public ScaleSettings {
    elections = List.copyOf(elections);
    timings = List.copyOf(timings);
    contenders = List.copyOf(contenders);
    Objects.requireNonNull(settle, "settle");
    Objects.requireNonNull(steady, "steady");
    Objects.requireNonNull(kubeconfig, "kubeconfig");
    for (int n : elections) {
      if (n < 1) {
        throw new IllegalArgumentException("elections=" + n + " is not valid: accepted values are whole numbers 1 "
            + "or more; fix: pass e.g. elections=1,100,1000");
      }
    }
    if (elections.isEmpty() || timings.isEmpty() || contenders.isEmpty()) {
      throw new IllegalArgumentException("elections, timings and contenders must each name at least one value; "
          + "fix: pass e.g. elections=100 timings=default contenders=stock,ours");
    }
    for (String name : contenders) {
      if (!KNOWN_CONTENDERS.contains(name)) {
        throw new IllegalArgumentException("contenders=" + name + " is not valid: accepted values are "
            + String.join(", ", KNOWN_CONTENDERS) + "; fix: pass contenders=stock,ours");
      }
    }
    if (clientThreads < 0) {
      throw new IllegalArgumentException("client.threads=" + clientThreads + " is not valid: accepted values are 0 "
          + "(fabric8's default executors) or more; fix: pass client.threads=8");
    }
    if (heapSamples < 1) {
      throw new IllegalArgumentException("heap.samples=" + heapSamples + " is not valid: accepted values are 1 or "
          + "more; fix: pass heap.samples=3");
    }
    if (leadTimeout.isZero() || leadTimeout.isNegative()) {
      throw new IllegalArgumentException("lead.timeout.s=" + leadTimeout.toSeconds() + " is not valid: accepted "
          + "values are 1 or more; fix: pass lead.timeout.s=120");
    }
  }

  /**
   * Parses {@code key=value} arguments over the defaults.
   *
   * @param args the arguments
   * @return the settings
   * @throws IllegalArgumentException for an unknown key or a bad value
   */
  public static ScaleSettings parse(String... args) {
    List<Integer> elections = List.of(1, 100);
    List<Timings> timings = List.of(Timings.DEFAULT, Timings.FAST);
    List<String> contenders = KNOWN_CONTENDERS;
    boolean followers = false;
    Optional<Duration> settle = Optional.empty();
    Duration steady = Duration.ofSeconds(15);
    int heapSamples = 3;
    Duration leadTimeout = Duration.ofSeconds(120);
    Optional<Path> kubeconfig = Optional.empty();
    int clientThreads = 0;
    for (String arg : args) {
      int eq = arg.indexOf('=');
      if (eq < 1) {
        throw new IllegalArgumentException(arg + " is not valid: accepted arguments are key=value; fix: see "
            + "docs/performance.md");
      }
      String key = arg.substring(0, eq).trim();
      String value = arg.substring(eq + 1).trim();
      switch (key) {
        case "elections" -> {
          List<Integer> parsed = new ArrayList<>();
          for (String n : value.split(",")) {
            parsed.add(number(key, n.trim()));
          }
          elections = parsed;
        }
        case "timings" -> {
          List<Timings> parsed = new ArrayList<>();
          for (String name : value.split(",")) {
            parsed.add(Timings.named(name));
          }
          timings = parsed;
        }
        case "contenders" -> contenders = Arrays.stream(value.split(",")).map(String::trim).toList();
        case "followers" -> followers = bool(key, value);
        case "settle.ms" -> settle = Optional.of(Duration.ofMillis(number(key, value)));
        case "steady.ms" -> steady = Duration.ofMillis(number(key, value));
        case "heap.samples" -> heapSamples = number(key, value);
        case "lead.timeout.s" -> leadTimeout = Duration.ofSeconds(number(key, value));
        // Validated exactly as the failover benchmark validates it (readable, a kubeconfig, a loopback server).
        case "kubeconfig" -> kubeconfig = BenchmarkSettings.parse(arg).kubeconfig();
        case "client.threads" -> clientThreads = number(key, value);
        default -> throw new IllegalArgumentException(key + " is not valid: accepted keys are elections, timings, "
            + "contenders, followers, settle.ms, steady.ms, heap.samples, lead.timeout.s, kubeconfig, "
            + "client.threads; fix: see docs/performance.md");
      }
    }
    return new ScaleSettings(elections, timings, contenders, followers, settle, steady, heapSamples, leadTimeout,
        kubeconfig, clientThreads);
  }

  /**
   * The window after every election leads over which threads are sampled: the fixed value, else three retry
   * periods and at least 1 s.
   *
   * @param timings the timings
   * @return the window
   */
  public Duration settleFor(Timings timings) {
    return settle.orElseGet(() -> {
      Duration three = timings.retryPeriod().multipliedBy(3);
      return three.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : three;
    });
  }

  /**
   * The window over which the steady-state count is taken once {@link #steady()} has passed: two retry periods,
   * at least 1 s.
   *
   * @param timings the timings
   * @return the window
   */
  public Duration steadyWindowFor(Timings timings) {
    Duration two = timings.retryPeriod().multipliedBy(2);
    return two.compareTo(Duration.ofSeconds(1)) < 0 ? Duration.ofSeconds(1) : two;
  }

  private static boolean bool(String key, String value) {
    return switch (value) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException(key + "=" + value + " is not valid: accepted values are true, "
          + "false; fix: pass " + key + "=true");
    };
  }

  private static int number(String key, String value) {
    try {
      int n = Integer.parseInt(value);
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // reported below with the accepted values
    }
    throw new IllegalArgumentException(
        key + "=" + value + " is not valid: accepted values are whole numbers 0 or more; fix: pass e.g. " + key + "=5");
  }
}
