package io.github.electionpolicy.testkit.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real-server mode against a TLS server on loopback whose certificate names only the host the kubeconfig
 * uses: {@code https://localhost:PORT} with {@code DNS:localhost} (no IP address), and {@code https://[::1]:PORT}
 * with {@code IP:::1}. The "server" is the embedded mock behind a TLS front end with such a certificate (made with
 * the JDK's keytool). The fixture's own client reaches it; a replica's proxied client must too, so its proxy has
 * to keep the host the kubeconfig gave and listen where the server does: a proxy URL of
 * {@code https://127.0.0.1:...} fails TLS host-name verification on every request.
 */
class ProxiedTlsServerTest {

  @TempDir
  Path dir;

  private LeaseApi backend;
  private ServerSocket front;
  private Path kubeconfig;

  @BeforeEach
  void startBackend() {
    backend = LeaseApi.builder().target(ApiServerTarget.embedded()).start();
  }

  /** A TLS front end on {@code bind} whose certificate names {@code san} only; the kubeconfig calls it {@code host}. */
  private void startTlsServer(String host, String san, InetAddress bind) throws Exception {
    int backendPort = URI.create(backend.url()).getPort();
    Path keystore = dir.resolve("server.p12");
    Path certificate = dir.resolve("server.crt");
    keytool("-genkeypair", "-alias", "server", "-keyalg", "RSA", "-keysize", "2048", "-dname", "CN=election-test",
        "-ext", "san=" + san, "-validity", "2", "-keystore", keystore.toString(), "-storetype", "PKCS12",
        "-storepass", "changeit", "-keypass", "changeit");
    keytool("-exportcert", "-rfc", "-alias", "server", "-keystore", keystore.toString(), "-storepass", "changeit",
        "-file", certificate.toString());
    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(keystore)) {
      keys.load(in, "changeit".toCharArray());
    }
    KeyManagerFactory keyManagers = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    keyManagers.init(keys, "changeit".toCharArray());
    SSLContext tls = SSLContext.getInstance("TLS");
    tls.init(keyManagers.getKeyManagers(), null, null);
    front = tls.getServerSocketFactory().createServerSocket(0, 50, bind);
    Thread acceptor = new Thread(() -> terminate(backendPort), "tls-front");
    acceptor.setDaemon(true);
    acceptor.start();

    kubeconfig = Files.writeString(dir.resolve("kubeconfig"), String.join("\n",
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        "- name: local",
        "  cluster:",
        "    server: https://" + host + ":" + front.getLocalPort(),
        "    certificate-authority: " + certificate,
        "users:",
        "- name: tester",
        "  user:",
        "    token: not-a-secret",
        "contexts:",
        "- name: local",
        "  context:",
        "    cluster: local",
        "    user: tester",
        "current-context: local",
        ""));
  }

  @AfterEach
  void stop() throws IOException {
    if (front != null) {
      front.close();
    }
    backend.close();
  }

  @Test
  void aReplicaOfAServerNamedLocalhostReachesItThroughItsProxyAndCanBeCut() throws Exception {
    startTlsServer("localhost", "dns:localhost", InetAddress.getByName("127.0.0.1"));
    replicaReachesTheServerThroughItsProxyAndCanBeCut();
  }

  @Test
  void aReplicaOfAServerOnIpv6LoopbackReachesItThroughItsProxyAndCanBeCut() throws Exception {
    InetAddress ipv6 = InetAddress.getByName("::1");
    try (ServerSocket probe = new ServerSocket(0, 1, ipv6)) {
      assertThat(probe.getLocalPort()).isPositive();
    } catch (IOException noIpv6) {
      org.junit.jupiter.api.Assumptions.abort("no IPv6 loopback on this machine: " + noIpv6);
    }
    startTlsServer("[::1]", "ip:::1", ipv6);
    replicaReachesTheServerThroughItsProxyAndCanBeCut();
  }

  private void replicaReachesTheServerThroughItsProxyAndCanBeCut() throws IOException {
    try (LeaseApi api = LeaseApi.builder().target(ApiServerTarget.kubeconfig(kubeconfig)).start()) {
      // The fixture's own client connects directly and verifies the certificate against the kubeconfig's host.
      assertThat(api.lease("orders-controller")).isEmpty();

      ReplicaLink replica = api.replica("r");
      assertThat(replica.client().leases().list().getItems()).as("a request through %s", replica).isEmpty();
      assertThat(replica.connectionCount()).isPositive();

      replica.refuseConnections();
      // At the TCP level: fabric8's client would retry the refused request with back-off for about 20 s.
      ProxyChecks.assertRefusedAtOnce(replica);
      replica.heal();
      assertThat(replica.client().leases().list().getItems()).isEmpty();
    }
  }

  private static void keytool(String... args) throws Exception {
    List<String> command = new java.util.ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(new String(process.getInputStream().readAllBytes())).isZero();
  }

  /** Accepts TLS connections and forwards their plain bytes to the embedded server. */
  private void terminate(int backendPort) {
    while (!front.isClosed()) {
      try {
        Socket client = front.accept();
        Socket server = new Socket(InetAddress.getByName("127.0.0.1"), backendPort);
        pump(client, server);
        pump(server, client);
      } catch (IOException closed) {
        return;
      }
    }
  }

  private static void pump(Socket from, Socket to) {
    Thread pump = new Thread(() -> {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        int read;
        while ((read = in.read(buffer)) >= 0) {
          out.write(buffer, 0, read);
          out.flush();
        }
      } catch (IOException closed) {
        // Either side closed.
      } finally {
        try {
          from.close();
          to.close();
        } catch (IOException ignored) {
          // Best effort.
        }
      }
    }, "tls-front-pump");
    pump.setDaemon(true);
    pump.start();
  }
}
