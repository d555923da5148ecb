package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;

/** Checks of a replica's proxy at the TCP level, where fabric8's client would retry with back-off for ~20 s. */
final class ProxyChecks {

  private ProxyChecks() {}

  /** A connection to the replica's proxy is closed at once, without a byte: the proxy refuses it. */
  static void assertRefusedAtOnce(ReplicaLink replica) throws IOException {
    URI url = URI.create(replica.url());
    String host = url.getHost().startsWith("[") ? url.getHost().substring(1, url.getHost().length() - 1)
        : url.getHost();
    try (Socket socket = new Socket(host, url.getPort())) {
      socket.setSoTimeout(5_000);
      InputStream in = socket.getInputStream();
      int read;
      try {
        read = in.read();
      } catch (SocketTimeoutException open) {
        throw new AssertionError("the connection to " + url + " stayed open: the proxy did not refuse it", open);
      } catch (IOException reset) {
        read = -1;
      }
      assertThat(read).as("what the refused connection to %s delivered", url).isEqualTo(-1);
    }
  }
}
