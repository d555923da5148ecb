package io.github.electionpolicy.examples;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.VersionInfo;
import java.util.ArrayList;
import java.util.List;

/**
 * Whether the API server answers: one {@code GET /version}, bounded by the client's timeouts. Any HTTP
 * answer counts, even an error status, because then the server is there and the status says what is wrong;
 * only a refused connection, a timeout or a TLS failure means it does not answer.
 *
 * @param answers whether an HTTP answer came back
 * @param verdict one line for the output, starting with the verdict
 */
record ApiServerCheck(boolean answers, String verdict) {

  static ApiServerCheck check(KubernetesClient client) {
    String url = String.valueOf(client.getMasterUrl());
    try {
      VersionInfo version = client.getKubernetesVersion();
      String named = version == null ? "" : version.getGitVersion() != null ? version.getGitVersion()
          : version.getMajor() != null ? "v" + version.getMajor() + "." + version.getMinor() : "";
      return new ApiServerCheck(true, "answers at " + url + (named.isEmpty() ? "" : " (Kubernetes " + named + ")"));
    } catch (KubernetesClientException e) {
      if (e.getCode() > 0) {
        return new ApiServerCheck(true, "answers at " + url + ", but GET /version returned " + describe(e)
            + (e.getCode() == 401 ? "; the credentials were refused: check the kubeconfig or the token" : ""));
      }
      return new ApiServerCheck(false, "does NOT answer at " + url + ": " + describe(e)
          + "; the adapter would retry every retry period and never lead");
    }
  }

  /** A short description of a failed call: the HTTP status and the server's message, or the root cause. */
  static String describe(KubernetesClientException e) {
    if (e.getCode() > 0) {
      String message = e.getStatus() == null ? null : e.getStatus().getMessage();
      return "HTTP " + e.getCode() + (message == null || message.isBlank() ? "" : " (" + message + ")");
    }
    // The client's own message says only that something failed; the causes say what (refused, timed out).
    List<String> causes = new ArrayList<>();
    String previous = null;
    for (Throwable cause = e.getCause(); cause != null && causes.size() < 4; cause = cause.getCause()) {
      String message = cause.getMessage();
      boolean news = message != null && !message.isBlank() && !message.equals(previous);
      causes.add(cause.getClass().getSimpleName() + (news ? ": " + message : ""));
      previous = message;
    }
    return causes.isEmpty() ? String.valueOf(e.getMessage()) : String.join(", caused by ", causes);
  }
}
