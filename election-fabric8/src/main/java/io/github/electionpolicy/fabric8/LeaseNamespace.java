package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.InvalidElectionSettingException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Objects;
import java.util.Optional;

/**
 * The namespace of the Lease and where it came from. {@link ElectionRunner} resolves it once at start, in
 * this order: {@link LeaseSettings#namespace()} when set, else the pod's namespace in {@link
 * LeaseSettings#serviceAccountNamespaceFile()}, else the namespace of the client's configuration (kubeconfig
 * context or {@code KUBERNETES_NAMESPACE}). Operator tools call {@link #resolve(LeaseSettings, String)} to say
 * where a controller would put its Lease.
 *
 * <pre>{@code
 * LeaseNamespace namespace = LeaseNamespace.resolve(settings, client.getNamespace());
 * System.out.println(namespace.name() + " (" + namespace.source().description() + ")");
 * }</pre>
 *
 * <p>Instances are immutable values and thread-safe.
 *
 * @param name the namespace
 * @param source which of the three places it came from
 */
public record LeaseNamespace(String name, Source source) {

  /** Where a namespace came from, in the order they are tried. */
  public enum Source {
    /** Set explicitly: {@link LeaseSettings#namespace()}. */
    EXPLICIT("LeaseSettings.namespace(...)"),
    /** Read from the pod's service-account namespace file. */
    SERVICE_ACCOUNT_FILE("the pod's service-account namespace file"),
    /** The namespace of the client's configuration. */
    CLIENT_CONFIGURATION("the client's configuration: kubeconfig context or KUBERNETES_NAMESPACE");

    private final String description;

    Source(String description) {
      this.description = description;
    }

    /**
     * Describes the source for a person.
     *
     * @return a short phrase, e.g. {@code "the pod's service-account namespace file"}
     */
    public String description() {
      return description;
    }
  }

  /**
   * Validates the components.
   *
   * @param name the namespace, not blank
   * @param source where it came from
   * @throws NullPointerException if a component is {@code null}
   * @throws IllegalArgumentException if {@code name} is blank
   */
  public LeaseNamespace {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(source, "source");
    if (name.isBlank()) {
      throw new IllegalArgumentException("a Lease namespace must not be blank");
    }
  }

  /**
   * Resolves the namespace of the Lease the way {@link ElectionRunner} does.
   *
   * @param settings the Lease settings, for the explicit namespace and the service-account file
   * @param clientNamespace the namespace of the client's configuration, {@code null} when it has none
   * @return the namespace and its source
   * @throws InvalidElectionSettingException if none of the three places has a namespace, or the one found is
   *     not a DNS-1123 label
   */
  public static LeaseNamespace resolve(LeaseSettings settings, String clientNamespace) {
    Objects.requireNonNull(settings, "settings");
    if (settings.namespace().isPresent()) {
      return new LeaseNamespace(settings.namespace().get(), Source.EXPLICIT);
    }
    Optional<String> fromFile = read(settings);
    if (fromFile.isPresent()) {
      return new LeaseNamespace(valid(fromFile.get(), "read from " + settings.serviceAccountNamespaceFile(),
          "correct that file, or call LeaseSettings.builder().namespace(...)"), Source.SERVICE_ACCOUNT_FILE);
    }
    if (clientNamespace != null && !clientNamespace.isBlank()) {
      return new LeaseNamespace(valid(clientNamespace.trim(), "the client's namespace",
          "correct the namespace of the client (kubeconfig context or KUBERNETES_NAMESPACE), or call "
              + "LeaseSettings.builder().namespace(...)"), Source.CLIENT_CONFIGURATION);
    }
    throw new InvalidElectionSettingException("namespace", null,
        "an explicit namespace, the pod's namespace in " + settings.serviceAccountNamespaceFile()
            + ", or a client configured with a namespace",
        "call LeaseSettings.builder().namespace(...), or run in a pod, or set the namespace of the client "
            + "(kubeconfig context or KUBERNETES_NAMESPACE)");
  }

  // A namespace found rather than given is checked too: an invalid one would only make every Lease call
  // fail at run time, far from its cause.
  private static String valid(String namespace, String source, String fix) {
    if (!SettingsChecks.isNamespace(namespace)) {
      throw new InvalidElectionSettingException("namespace", namespace,
          "a DNS-1123 label of at most 63 characters: lower-case letters, digits and '-' (this one is " + source
              + ")", fix);
    }
    return namespace;
  }

  private static Optional<String> read(LeaseSettings settings) {
    try {
      if (!Files.isRegularFile(settings.serviceAccountNamespaceFile())) {
        return Optional.empty();
      }
      String content = Files.readString(settings.serviceAccountNamespaceFile(), StandardCharsets.UTF_8).trim();
      return content.isEmpty() ? Optional.empty() : Optional.of(content);
    } catch (IOException | SecurityException unreadable) {
      return Optional.empty();
    }
  }
}
