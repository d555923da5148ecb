package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.micrometer.ElectionMetrics;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The two beans docs/spring-boot.md shows for metrics, in a real application with Spring Boot's Micrometer
 * auto-configuration: the lifecycle starts the runner through {@code ElectionMetrics.start}, Spring Boot binds
 * the binder to its registry, and the registry shows the replica leading.
 */
class MetricsThroughAStarterTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** An application whose election is measured: the page's two beans, between the markers. */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class MeasuredApplication {
    // docs:start
    @Bean
    ElectionMetrics electionMetrics() {
      return new ElectionMetrics();
    }

    @Bean
    ElectionRunnerStarter measuredStart(ElectionMetrics metrics) {
      return metrics::start;
    }
    // docs:end
  }

  @Test
  void theRegistryShowsTheReplicaLeading() {
    KubernetesClient client = api.replica("replica-1").client();
    try (ConfigurableApplicationContext context = new SpringApplicationBuilder(MeasuredApplication.class)
        .web(WebApplicationType.NONE)
        .initializers(c -> c.getBeanFactory().registerSingleton("kubernetesClient", client))
        .run("--spring.main.banner-mode=off", "--election.lease-name=orders-controller",
            "--election.namespace=" + api.namespace(), "--election.identity=replica-1",
            "--election.lease-duration=2s", "--election.renew-deadline=1500ms", "--election.retry-period=200ms",
            "--election.loss-policy=recontend")) {
      MeterRegistry registry = context.getBean(MeterRegistry.class);
      Await.until("leader_election_master_status is 1", () -> {
        Gauge status = registry.find(ElectionMetrics.MASTER_STATUS)
            .tag(ElectionMetrics.TAG_NAME, "orders-controller").gauge();
        return status != null && status.value() == 1.0;
      });
    }
  }

  @Test
  void thePageShowsTheseBeans() throws IOException {
    Path source = Path.of(System.getProperty("basedir", "."))
        .resolve("../election-spring-boot/src/test/java/io/github/electionpolicy/springboot/MetricsThroughAStarterTest.java")
        .normalize();
    List<String> lines = Files.readAllLines(source, StandardCharsets.UTF_8);
    List<String> beans = lines.subList(lines.indexOf("    // docs:start") + 1, lines.indexOf("    // docs:end"))
        .stream().map(line -> line.isEmpty() ? line : line.substring(4)).collect(Collectors.toList());

    assertThat(Docs.blockAfter("two beans of your own bind the metrics")).isEqualTo(beans);
  }
}
