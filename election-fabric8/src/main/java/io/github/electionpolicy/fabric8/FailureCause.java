package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.InterruptedIOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;

/**
 * Says in a few words why a request failed, from the whole cause chain: fabric8 wraps a refused connection
 * in "Operation: [update] ... failed." with no status (-1), which hides the one fact an operator needs.
 */
final class FailureCause {

  private FailureCause() {}

  /** A short description: the HTTP status and its reason, or the network cause, never "HTTP -1". */
  static String describe(Throwable failure) {
    int status = status(failure);
    String network = network(failure);
    if (status > 0) {
      return "HTTP " + status + reason(status) + ": " + firstLine(failure.getMessage());
    }
    if (network != null) {
      return network;
    }
    Throwable root = root(failure);
    return root.getClass().getSimpleName() + (root.getMessage() == null ? "" : ": " + firstLine(root.getMessage()));
  }

  private static int status(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof KubernetesClientException && ((KubernetesClientException) t).getCode() > 0) {
        return ((KubernetesClientException) t).getCode();
      }
    }
    return 0;
  }

  private static String reason(int status) {
    switch (status) {
      case 401:
        return " (unauthorized: the client's credentials were refused)";
      case 403:
        return " (forbidden: RBAC does not grant this verb on leases)";
      case 404:
        return " (not found)";
      case 409:
        return " (conflict)";
      case 429:
        return " (too many requests: the API server is throttling)";
      default:
        return status >= 500 ? " (server error)" : "";
    }
  }

  private static String network(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof ConnectException) {
        return "connection refused" + detail(t);
      }
      if (t instanceof UnknownHostException) {
        return "DNS cannot resolve the API server's host" + detail(t);
      }
      if (t instanceof NoRouteToHostException) {
        return "no route to the API server's host" + detail(t);
      }
      if (t instanceof SSLException) {
        return "TLS handshake with the API server failed" + detail(t);
      }
      if (t instanceof InterruptedIOException || t instanceof TimeoutException || t instanceof HttpTimeoutException) {
        return "timed out" + detail(t);
      }
      if (t instanceof ClosedChannelException) {
        return "the connection to the API server was closed";
      }
    }
    return null;
  }

  private static String detail(Throwable t) {
    return t.getMessage() == null || t.getMessage().isBlank() ? "" : " (" + firstLine(t.getMessage()) + ")";
  }

  private static Throwable root(Throwable failure) {
    Throwable root = failure;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root;
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "";
    }
    int newline = message.indexOf('\n');
    return (newline < 0 ? message : message.substring(0, newline)).strip();
  }
}
