package io.github.electionpolicy.fabric8;

import io.github.electionpolicy.InvalidElectionSettingException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Optional;

/** Where the Lease lives: explicit, else the pod's service-account namespace file, else the client's. */
final class Namespaces {

  private Namespaces() {}

  static String resolve(LeaseSettings settings, String clientNamespace) {
    if (settings.namespace().isPresent()) {
      return settings.namespace().get();
    }
    Optional<String> fromFile = read(settings);
    if (fromFile.isPresent()) {
      return valid(fromFile.get(), "read from " + settings.serviceAccountNamespaceFile(),
          "correct that file, or call LeaseSettings.builder().namespace(...)");
    }
    if (clientNamespace != null && !clientNamespace.isBlank()) {
      return valid(clientNamespace.trim(), "the client's namespace",
          "correct the namespace of the client (kubeconfig context or KUBERNETES_NAMESPACE), or call "
              + "LeaseSettings.builder().namespace(...)");
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
