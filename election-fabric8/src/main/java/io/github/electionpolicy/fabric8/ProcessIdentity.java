package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.Environment;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * The identity a contending runner writes as the Lease holder, resolved when it starts (never when the
 * settings are built, so that settings stay plain values). The first that is present and not blank wins:
 *
 * <ol>
 *   <li>the explicit {@link LeaseSettings#identity()}, used as given;
 *   <li>{@value LeaseSettings#POD_NAME_VARIABLE}, then {@value LeaseSettings#HOSTNAME_VARIABLE}, read through
 *       {@link LeaseSettings#environment()}, then the host name the JVM resolves (waited for at most
 *       {@link #HOST_NAME_WAIT}: a reverse lookup can hang on a broken resolver), each with {@code -} and
 *       {@value #SUFFIX_LENGTH} random characters appended;
 *   <li>a random identity, {@code replica-} and {@value #RANDOM_ID_LENGTH} random characters.
 * </ol>
 *
 * <p>The suffix keeps the derived identities unique where their base is not: a StatefulSet pod restarted under
 * the same name, two processes on one host, two containers whose {@code HOSTNAME} is the same. An explicit
 * identity gets none, since whoever sets it decides how it is unique. Stateless and thread-safe.
 */
final class ProcessIdentity {

  /** The longest wait for the JVM's host name before falling back to a random identity. */
  static final Duration HOST_NAME_WAIT = Duration.ofSeconds(2);
  static final int SUFFIX_LENGTH = 5;
  static final int RANDOM_ID_LENGTH = 10;

  // No vowels and no look-alikes (0/o, 1/l): a suffix never spells a word or reads ambiguously.
  private static final char[] ALPHABET = "bcdfghjkmnpqrstvwxz2456789".toCharArray();
  private static final SecureRandom RANDOM = new SecureRandom();

  /** Where a resolved identity came from, for the log line that names it. */
  enum Source {
    EXPLICIT("set explicitly"),
    POD_NAME("from " + LeaseSettings.POD_NAME_VARIABLE + " plus a random suffix"),
    HOSTNAME("from " + LeaseSettings.HOSTNAME_VARIABLE + " plus a random suffix"),
    HOST_NAME("from the JVM's host name plus a random suffix"),
    RANDOM("random: none of " + LeaseSettings.POD_NAME_VARIABLE + ", " + LeaseSettings.HOSTNAME_VARIABLE
        + " or the host name was available; set " + LeaseSettings.POD_NAME_VARIABLE + " from the downward API");

    private final String description;

    Source(String description) {
      this.description = description;
    }

    @Override
    public String toString() {
      return description;
    }
  }

  /** An identity and where it came from. */
  record Resolved(String identity, Source source) {
    Resolved {
      Objects.requireNonNull(identity, "identity");
      Objects.requireNonNull(source, "source");
    }
  }

  private ProcessIdentity() {}

  /** Resolves the identity of a contending runner from its settings and the JVM's host name. */
  static Resolved resolve(LeaseSettings settings) {
    return resolve(settings.identity(), settings.environment(), ProcessIdentity::jvmHostName);
  }

  static Resolved resolve(Optional<String> explicit, Environment environment, Supplier<Optional<String>> hostName) {
    if (explicit.isPresent()) {
      return new Resolved(explicit.get(), Source.EXPLICIT);
    }
    Optional<Resolved> derived = variable(environment, LeaseSettings.POD_NAME_VARIABLE, Source.POD_NAME)
        .or(() -> variable(environment, LeaseSettings.HOSTNAME_VARIABLE, Source.HOSTNAME))
        .or(() -> suffixed(hostName.get(), Source.HOST_NAME));
    return derived.orElseGet(() -> new Resolved("replica-" + random(RANDOM_ID_LENGTH), Source.RANDOM));
  }

  private static Optional<Resolved> variable(Environment environment, String name, Source source) {
    return suffixed(environment.get(name), source);
  }

  private static Optional<Resolved> suffixed(Optional<String> base, Source source) {
    return base.map(String::trim).filter(b -> !b.isEmpty())
        .map(b -> new Resolved(b + "-" + random(SUFFIX_LENGTH), source));
  }

  /**
   * The host name the JVM resolves, waited for at most {@link #HOST_NAME_WAIT} on a daemon thread of its own;
   * empty when the lookup failed or took longer.
   */
  static Optional<String> jvmHostName() {
    CompletableFuture<String> name = new CompletableFuture<>();
    Thread lookup = new Thread(() -> {
      try {
        name.complete(InetAddress.getLocalHost().getHostName());
      } catch (Exception e) {
        name.completeExceptionally(e);
      }
    }, "election-identity-host-name");
    lookup.setDaemon(true);
    lookup.start();
    try {
      return Optional.ofNullable(name.get(HOST_NAME_WAIT.toMillis(), TimeUnit.MILLISECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    } catch (ExecutionException | TimeoutException e) {
      return Optional.empty();
    }
  }

  private static String random(int length) {
    char[] chars = new char[length];
    for (int i = 0; i < chars.length; i++) {
      chars[i] = ALPHABET[RANDOM.nextInt(ALPHABET.length)];
    }
    return new String(chars);
  }
}
