package io.github.electionpolicy.examples;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Where the adapter would put the Lease, resolved in the adapter's order: the namespace set explicitly,
 * else the pod's service-account namespace file, else the namespace of the client's configuration. The
 * adapter's own resolver is package-private, so this follows its documented rule ({@code
 * LeaseSettings#namespace()}) and says which source won.
 *
 * @param namespace the namespace, empty when no source has one (the adapter then refuses to start)
 * @param source where it came from, for the output
 */
record LeaseNamespace(Optional<String> namespace, String source) {

  static LeaseNamespace resolve(Optional<String> explicit, Path serviceAccountFile, String clientNamespace) {
    if (explicit.isPresent()) {
      return new LeaseNamespace(explicit, "from --namespace");
    }
    Optional<String> fromFile = read(serviceAccountFile);
    if (fromFile.isPresent()) {
      return new LeaseNamespace(fromFile, "from the pod's service account, " + serviceAccountFile);
    }
    if (clientNamespace != null && !clientNamespace.isBlank()) {
      return new LeaseNamespace(Optional.of(clientNamespace.trim()),
          "from the client's configuration: kubeconfig context or KUBERNETES_NAMESPACE");
    }
    return new LeaseNamespace(Optional.empty(), "no --namespace, no " + serviceAccountFile
        + ", no namespace in the client's configuration");
  }

  private static Optional<String> read(Path file) {
    try {
      if (!Files.isRegularFile(file)) {
        return Optional.empty();
      }
      String content = Files.readString(file, StandardCharsets.UTF_8).trim();
      return content.isEmpty() ? Optional.empty() : Optional.of(content);
    } catch (IOException | SecurityException unreadable) {
      return Optional.empty();
    }
  }
}
