package io.github.electionpolicy.testkit.fabric8;

import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.util.Properties;

/**
 * Checks, before the embedded server starts, that fabric8's mock server can serve at all. It runs on Vert.x, and a
 * Netty older than the one Vert.x is built with (a Spring Boot BOM manages Netty for the whole build) fails every
 * request on the server's threads, e.g. with {@code NoSuchFieldError: ACCEPT_QUERY}: the only signs were an error
 * in the log and a replica that never leads. Initialising Vert.x's {@code HttpHeaders} fails the same way, here,
 * with a message that names the fix. Stateless.
 */
final class MockServerRuntime {

  static final String VERTX_HEADERS = "io.vertx.core.http.HttpHeaders";

  private MockServerRuntime() {}

  /** Throws {@link IllegalStateException} if the mock server's Vert.x does not link against this Netty. */
  static void check() {
    ClassLoader loader = MockServerRuntime.class.getClassLoader();
    try {
      Class.forName(VERTX_HEADERS, true, loader);
    } catch (ClassNotFoundException noVertx) {
      // A mock server of another make: nothing to check here.
    } catch (LinkageError e) {
      throw new IllegalStateException(message(version(loader, "io.netty", "netty-codec-http"),
          vertxVersion(loader), rootCause(e)), e);
    }
  }

  static String message(String netty, String vertx, Throwable cause) {
    return "Netty=" + netty + " (io.netty:netty-codec-http on the test class path) is not valid: fabric8's mock "
        + "server, the embedded Lease API, runs on Vert.x " + vertx + ", which fails against it (" + cause
        + "), so every request would fail and no replica would ever lead; accepted values are the Netty that "
        + "Vert.x " + vertx + " is built with (4.2.18.Final for fabric8 8.0.0's Vert.x 5.2.0; mvn "
        + "dependency:tree -Dincludes=io.netty:netty-codec-http shows what your build chose, and why); fix: with "
        + "spring-boot-starter-parent as the parent, set the property netty.version to that version; with "
        + "Spring Boot's BOM (spring-boot-dependencies) imported, import io.netty:netty-bom at that version "
        + "before it in dependencyManagement (the first import wins); elsewhere, manage io.netty:netty-bom at "
        + "that version";
  }

  private static Throwable rootCause(Throwable e) {
    Throwable cause = e;
    while (cause.getCause() != null && cause.getCause() != cause) {
      cause = cause.getCause();
    }
    return cause;
  }

  /** Vert.x's version from its jar's manifest (it has no Maven metadata), or {@code "unknown"}. */
  private static String vertxVersion(ClassLoader loader) {
    try {
      String version = Class.forName(VERTX_HEADERS, false, loader).getPackage().getImplementationVersion();
      return version == null ? "unknown" : version;
    } catch (ClassNotFoundException | LinkageError unknown) {
      return "unknown";
    }
  }

  /** The version in the jar's Maven metadata, or {@code "unknown"}. */
  static String version(ClassLoader loader, String groupId, String artifactId) {
    URL properties = loader.getResource("META-INF/maven/" + groupId + "/" + artifactId + "/pom.properties");
    if (properties == null) {
      return "unknown";
    }
    try (InputStream in = properties.openStream()) {
      Properties read = new Properties();
      read.load(in);
      return read.getProperty("version", "unknown");
    } catch (IOException unreadable) {
      return "unknown";
    }
  }
}
