package io.github.electionpolicy.benchmarks.failover;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy on the loopback address between one replica and the mock API server. {@link #cut()} does to
 * the replica's connections what the kernel does when a process dies: it closes every one of them, so the
 * server sees its watches end. Closing the replica's client is not enough: on Java 17 the JDK HTTP client
 * keeps its sockets open after {@code close()}, and the mock server then blocks for up to 30 s on each watch
 * event it writes to a reader that is gone. Thread-safe.
 */
final class ReplicaProxy implements AutoCloseable {

  private final ServerSocket listener;
  private final InetSocketAddress target;
  private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
  private volatile boolean cut;

  /**
   * Starts accepting on a free loopback port.
   *
   * @param name used in thread names
   * @param targetPort the mock server's port on the loopback address
   * @throws IOException when no port can be bound
   */
  ReplicaProxy(String name, int targetPort) throws IOException {
    this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "proxy-" + name);
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /**
   * The URL replicas use instead of the server's.
   *
   * @return {@code http://127.0.0.1:PORT/}
   */
  String url() {
    return "http://" + listener.getInetAddress().getHostAddress() + ":" + listener.getLocalPort() + "/";
  }

  /** Closes every connection and refuses new ones, as a dead process's kernel would. */
  void cut() {
    cut = true;
    closeQuietly(listener);
    sockets.forEach(ReplicaProxy::closeQuietly);
  }

  @Override
  public void close() {
    cut();
  }

  private void accept() {
    while (!cut) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket();
        sockets.add(client);
        sockets.add(server);
        if (cut) {
          closeQuietly(client);
          return;
        }
        server.connect(target);
        client.setTcpNoDelay(true);
        server.setTcpNoDelay(true);
        pump(client, server);
        pump(server, client);
      } catch (IOException e) {
        // The listener was closed by cut(), or one connection failed; either way the replica sees a reset.
      }
    }
  }

  private void pump(Socket from, Socket to) {
    Thread thread = new Thread(() -> {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException e) {
        // A side closed: end both.
      } finally {
        closeQuietly(from);
        closeQuietly(to);
        sockets.remove(from);
        sockets.remove(to);
      }
    }, "proxy-pump");
    thread.setDaemon(true);
    thread.start();
  }

  private static void closeQuietly(java.io.Closeable closeable) {
    try {
      closeable.close();
    } catch (IOException e) {
      // Already closed.
    }
  }
}
