package io.github.electionpolicy.testkit.fabric8;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * Which API server a {@link LeaseApi} talks to: the embedded one (fabric8's mock API server, the default), or a
 * real one named by a kubeconfig file. A build switches every fixture to a real server with
 * {@code -Delection.it.kubeconfig=PATH} (Surefire passes it on with {@code systemPropertyVariables}).
 *
 * <pre>{@code
 * ApiServerTarget target = ApiServerTarget.fromSystemProperties(); // what LeaseApi.builder() uses
 * LeaseApi api = LeaseApi.builder().target(ApiServerTarget.embedded()).start(); // never a real server
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public sealed interface ApiServerTarget permits ApiServerTarget.Embedded, ApiServerTarget.Kubeconfig {

  /** The system property that names a kubeconfig file and so switches the fixture to a real API server. */
  String KUBECONFIG_PROPERTY = "election.it.kubeconfig";

  /**
   * The embedded server: fabric8's mock API server in CRUD mode on a free loopback port.
   *
   * @return the embedded target
   */
  static ApiServerTarget embedded() {
    return new Embedded();
  }

  /**
   * A real API server, reached with the current context of a kubeconfig file.
   *
   * @param kubeconfig the kubeconfig file
   * @return the target
   */
  static ApiServerTarget kubeconfig(Path kubeconfig) {
    return new Kubeconfig(kubeconfig);
  }

  /**
   * The target {@value #KUBECONFIG_PROPERTY} selects: a real server when it is set, else the embedded one.
   *
   * @return the target
   * @throws IllegalArgumentException if the property is set but blank, or names no readable file
   */
  static ApiServerTarget fromSystemProperties() {
    return fromProperties(System::getProperty);
  }

  /**
   * Like {@link #fromSystemProperties()}, reading the property through {@code properties}, so that a test can
   * check the rule without setting system properties.
   *
   * @param properties looks a property up by name; returns {@code null} when unset
   * @return the target
   * @throws IllegalArgumentException if the property is set but blank, or names no readable file
   */
  static ApiServerTarget fromProperties(UnaryOperator<String> properties) {
    String value = properties.apply(KUBECONFIG_PROPERTY);
    if (value == null) {
      return embedded();
    }
    if (value.isBlank()) {
      throw new IllegalArgumentException(KUBECONFIG_PROPERTY + "=\"" + value + "\" is not valid: accepted values "
          + "are the path of a readable kubeconfig file; fix: unset it to test against the embedded Lease API, "
          + "or pass -D" + KUBECONFIG_PROPERTY + "=PATH");
    }
    Path path = Path.of(value.strip());
    if (!Files.isRegularFile(path) || !Files.isReadable(path)) {
      throw new IllegalArgumentException(KUBECONFIG_PROPERTY + "=" + value + " is not valid: no readable file "
          + "there (resolved to " + path.toAbsolutePath() + "); accepted values are the path of a readable "
          + "kubeconfig file; fix: point it at the kubeconfig of the cluster the tests may use");
    }
    return kubeconfig(path);
  }

  /** The embedded server. */
  record Embedded() implements ApiServerTarget {}

  /**
   * A real API server.
   *
   * @param path the kubeconfig file; its current context names the server and the credentials
   */
  record Kubeconfig(Path path) implements ApiServerTarget {

    /**
     * Checks the path.
     *
     * @param path the kubeconfig file
     */
    public Kubeconfig {
      Objects.requireNonNull(path, "path");
    }
  }
}
