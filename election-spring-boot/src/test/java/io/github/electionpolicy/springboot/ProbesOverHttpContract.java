package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * What the kubelet sees: two replicas of a web application with Actuator, configured with the probe groups
 * exactly as docs/spring-boot.md writes them, answer the probe paths of the page's Deployment over HTTP. Under
 * {@code election.readiness=leader-only} the leader's readiness probe answers 200 and the follower's 503, both
 * are live, and after a hand-over the new leader turns ready. A subclass says where the health indicators come
 * from: the auto-configuration on Spring Boot 4, the beans the page shows on Spring Boot 3.5.
 */
abstract class ProbesOverHttpContract {

  private static final Pattern PROBE_PATH = Pattern.compile("path: (\\S+)");

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final ServiceLog log = new ServiceLog();

  /** Configuration classes to add to the application for its health indicators; none when auto-configured. */
  abstract Class<?>[] healthIndicatorSources();

  /** A web application with one leader-only service. */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class ProbedApplication {
    @Bean
    LeaderService ordersReconciler(ServiceLog log, @Value("${election.identity}") String replica) {
      return log.service(replica);
    }
  }

  private ConfigurableApplicationContext start(String replica) {
    Path probes = Docs.writeBlock("<!-- probe groups -->", "probe-groups.yml");
    KubernetesClient client = api.replica(replica).client();
    List<Class<?>> sources = new ArrayList<>(List.of(ProbedApplication.class));
    sources.addAll(List.of(healthIndicatorSources()));
    return new SpringApplicationBuilder(sources.toArray(new Class<?>[0]))
        .initializers(context -> {
          context.getBeanFactory().registerSingleton("kubernetesClient", client);
          context.getBeanFactory().registerSingleton("serviceLog", log);
        })
        .run("--spring.main.banner-mode=off", "--server.port=0",
            "--spring.config.additional-location=file:" + probes.toAbsolutePath(),
            "--election.lease-name=orders-controller", "--election.namespace=" + api.namespace(),
            "--election.identity=" + replica, "--election.readiness=leader-only",
            "--election.lease-duration=2s", "--election.renew-deadline=1500ms", "--election.retry-period=200ms",
            "--election.loss-policy=recontend");
  }

  /** The liveness and readiness paths of the Deployment the page shows. */
  private static List<String> deploymentProbePaths() {
    List<String> paths = new ArrayList<>();
    for (String line : Docs.blockAfter("<!-- deployment probes -->")) {
      Matcher path = PROBE_PATH.matcher(line);
      if (path.find()) {
        paths.add(path.group(1).replace("}", "").replace(",", ""));
      }
    }
    assertThat(paths).as("the Deployment's probe paths").hasSize(2);
    return paths;
  }

  @Test
  void theLeaderIsReadyTheFollowerNotAndBothLiveThenTheFollowerTakesOverReadiness() {
    List<String> paths = deploymentProbePaths();
    String liveness = paths.stream().filter(p -> p.contains("liveness")).findFirst().orElseThrow();
    String readiness = paths.stream().filter(p -> p.contains("readiness")).findFirst().orElseThrow();
    try (ConfigurableApplicationContext first = start("replica-1");
        ConfigurableApplicationContext second = start("replica-2")) {
      Await.until("one replica leads", () -> log.running().size() == 1);
      String leader = log.running().iterator().next();
      ConfigurableApplicationContext leading = leader.equals("replica-1") ? first : second;
      ConfigurableApplicationContext following = leading == first ? second : first;
      String follower = leader.equals("replica-1") ? "replica-2" : "replica-1";

      Await.until("the leader's readiness probe answers 200", () -> status(leading, readiness) == 200);
      assertThat(status(following, readiness)).as("the follower's readiness probe").isEqualTo(503);
      assertThat(status(leading, liveness)).as("the leader's liveness probe").isEqualTo(200);
      assertThat(status(following, liveness)).as("the follower's liveness probe").isEqualTo(200);

      leading.close();

      Await.until("the new leader's readiness probe answers 200", () -> status(following, readiness) == 200);
      assertThat(log.running()).isEqualTo(Set.of(follower));
    }
  }

  private static int status(ConfigurableApplicationContext context, String path) {
    int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    try {
      return HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://localhost:" + port + path)).timeout(Duration.ofSeconds(5))
              .build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return -1;
    }
  }
}
