package io.github.electionpolicy.fabric8;

import io.fabric8.kubernetes.client.http.HttpRequest;
import java.lang.reflect.Proxy;
import java.net.URI;

/** A write request as fabric8's HTTP layer hands it to the write gate, for the simulation's services. */
final class SimHttp {

  private static final URI DATA = URI.create("https://sim/apis/apps/v1/namespaces/sim/deployments/work");

  private SimHttp() {}

  /** A PUT of the services' data: a write, which the gate refuses once the term is not valid. */
  static HttpRequest write() {
    return (HttpRequest) Proxy.newProxyInstance(HttpRequest.class.getClassLoader(),
        new Class<?>[] {HttpRequest.class}, (proxy, method, args) -> switch (method.getName()) {
          case "method" -> "PUT";
          case "uri" -> DATA;
          case "toString" -> "PUT " + DATA;
          case "hashCode" -> System.identityHashCode(proxy);
          case "equals" -> proxy == args[0];
          default -> throw new UnsupportedOperationException(method.getName());
        });
  }
}
