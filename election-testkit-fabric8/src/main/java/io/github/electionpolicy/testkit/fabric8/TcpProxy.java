package io.github.electionpolicy.testkit.fabric8;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback TCP proxy in front of an API server (the mock one, or a real one on a loopback address, whose TLS
 * passes through untouched) that a test can cut: {@link #blackhole()} keeps
 * connections open but forwards nothing (a network partition: requests hang), {@link #refuse()} closes every
 * connection and each new one at once (the server is down, or the replica's process died), {@link #restore()}
 * forwards again. Closing a client is not enough to drop its connections: on Java 17 the JDK HTTP client keeps
 * its sockets open after {@code close()}, so the fixture closes them here. Thread-safe.
 */
final class TcpProxy implements AutoCloseable {

  private enum Mode { OPEN, BLACKHOLE, REFUSE }

  private final InetAddress targetHost;
  private final int targetPort;
  private final String scheme;
  private final String urlHost;
  private final ServerSocket listener;
  private final AtomicInteger connections = new AtomicInteger();
  private final List<Socket> sockets = new ArrayList<>();
  private volatile Mode mode = Mode.OPEN;

  /** A proxy to the mock server's plain HTTP port on the loopback address. */
  TcpProxy(int targetPort) throws IOException {
    this("http", "127.0.0.1", InetAddress.getLoopbackAddress(), targetPort);
  }

  /**
   * A proxy to {@code targetHost:targetPort} that listens on that same loopback address, and whose URL has
   * {@code scheme} (https passes TLS through) and {@code urlHost}: the host exactly as the server's own URL names
   * it ({@code localhost}, {@code 127.0.0.1}, {@code [::1]}), so that the server's certificate, which names that
   * host, still matches when the client verifies it.
   */
  TcpProxy(String scheme, String urlHost, InetAddress targetHost, int targetPort) throws IOException {
    this.scheme = scheme;
    this.urlHost = urlHost;
    this.targetHost = targetHost;
    this.targetPort = targetPort;
    this.listener = new ServerSocket(0, 50, targetHost);
    Thread acceptor = new Thread(this::accept, "tcp-proxy-accept-" + listener.getLocalPort());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  String url() {
    return scheme + "://" + urlHost + ":" + listener.getLocalPort() + "/";
  }

  /** How many connections clients opened to this proxy, refused ones included. */
  int connectionCount() {
    return connections.get();
  }

  void blackhole() {
    mode = Mode.BLACKHOLE;
  }

  void refuse() {
    mode = Mode.REFUSE;
    closeAll();
  }

  void restore() {
    closeAll();
    mode = Mode.OPEN;
  }

  private void accept() {
    while (!listener.isClosed()) {
      Socket downstream;
      try {
        downstream = listener.accept();
      } catch (IOException closed) {
        return;
      }
      connections.incrementAndGet();
      Mode now = mode;
      if (now == Mode.REFUSE) {
        closeQuietly(downstream);
        continue;
      }
      try {
        Socket upstream = now == Mode.OPEN ? new Socket(targetHost, targetPort) : null;
        track(downstream);
        downstream.setTcpNoDelay(true);
        if (upstream != null) {
          track(upstream);
          upstream.setTcpNoDelay(true);
          pump(downstream, upstream);
          pump(upstream, downstream);
        } else {
          pump(downstream, null);
        }
      } catch (IOException upstreamDown) {
        closeQuietly(downstream);
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread pump = new Thread(() -> {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = from.getInputStream()) {
        OutputStream out = to == null ? null : to.getOutputStream();
        int read;
        while ((read = in.read(buffer)) >= 0) {
          if (mode == Mode.OPEN && out != null) {
            out.write(buffer, 0, read);
            out.flush();
          }
        }
      } catch (IOException closed) {
        // The other side or the test closed the connection.
      } finally {
        closeQuietly(from);
        if (to != null) {
          closeQuietly(to);
        }
      }
    }, "tcp-proxy-pump");
    pump.setDaemon(true);
    pump.start();
  }

  private synchronized void track(Socket socket) {
    sockets.add(socket);
  }

  private synchronized void closeAll() {
    sockets.forEach(TcpProxy::closeQuietly);
    sockets.clear();
  }

  private static void closeQuietly(Socket socket) {
    try {
      socket.close();
    } catch (IOException ignored) {
      // Closing is best effort.
    }
  }

  @Override
  public void close() throws IOException {
    listener.close();
    closeAll();
  }
}
