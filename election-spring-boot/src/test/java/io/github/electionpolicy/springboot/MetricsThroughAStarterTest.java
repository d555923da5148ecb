package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.micrometer.ElectionMetrics;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testsupport.Await;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
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
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * {@link ElectionMetricsAutoConfiguration}: with {@code election-micrometer} on the class path the election is
 * measured with no bean of the application's; a binder of its own (extra tags) replaces the default one; a starter
 * of its own turns the metrics configuration off; without the module nothing is defined. The first two run real
 * applications with Spring Boot's Micrometer auto-configuration, whose registry shows the replica leading.
 */
class MetricsThroughAStarterTest {

  private static final String[] ARGS = {"--spring.main.banner-mode=off", "--election.lease-name=orders-controller",
      "--election.identity=replica-1", "--election.lease-duration=2s", "--election.renew-deadline=1500ms",
      "--election.retry-period=200ms", "--election.loss-policy=recontend"};

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  /** An application with no metrics bean of its own. */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class PlainApplication {}

  /** An application whose binder adds a tag: the page's bean, between the markers. */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class TaggedApplication {
    // docs:start
    @Bean
    ElectionMetrics electionMetrics() {
      return new ElectionMetrics(Tags.of("service", "orders"));
    }
    // docs:end
  }

  private ConfigurableApplicationContext run(Class<?> application) {
    KubernetesClient client = api.replica("replica-1").client();
    String[] args = java.util.stream.Stream.concat(java.util.Arrays.stream(ARGS),
        java.util.stream.Stream.of("--election.namespace=" + api.namespace())).toArray(String[]::new);
    return new SpringApplicationBuilder(application)
        .web(WebApplicationType.NONE)
        .initializers(c -> c.getBeanFactory().registerSingleton("kubernetesClient", client))
        .run(args);
  }

  private static void awaitLeading(MeterRegistry registry, Tags tags) {
    Await.until("leader_election_master_status is 1", () -> {
      Gauge status = registry.find(ElectionMetrics.MASTER_STATUS)
          .tag(ElectionMetrics.TAG_NAME, "orders-controller").tags(tags).gauge();
      return status != null && status.value() == 1.0;
    });
  }

  @Test
  void withTheModuleOnTheClassPathTheRegistryShowsTheReplicaLeadingWithNoBeanOfTheApplications() {
    try (ConfigurableApplicationContext context = run(PlainApplication.class)) {
      assertThat(context.getBeansOfType(ElectionMetrics.class)).hasSize(1);
      awaitLeading(context.getBean(MeterRegistry.class), Tags.empty());
    }
  }

  @Test
  void aContextStoppedAndStartedAgainIsMeasuredThroughTheSameBinder() {
    try (ConfigurableApplicationContext context = run(PlainApplication.class)) {
      MeterRegistry registry = context.getBean(MeterRegistry.class);
      awaitLeading(registry, Tags.empty());

      context.stop();
      Await.until("the closed runner's meters are removed",
          () -> registry.find(ElectionMetrics.MASTER_STATUS).gauge() == null);
      context.start();

      awaitLeading(registry, Tags.empty());
    }
  }

  @Test
  void aBinderOfTheApplicationsReplacesTheDefaultAndIsStillStartedByTheLifecycle() {
    try (ConfigurableApplicationContext context = run(TaggedApplication.class)) {
      assertThat(context.getBeansOfType(ElectionMetrics.class)).hasSize(1);
      awaitLeading(context.getBean(MeterRegistry.class), Tags.of("service", "orders"));
    }
  }

  @Test
  void aStarterOfTheApplicationsTurnsTheMetricsConfigurationOff() {
    contexts()
        .withBean(ElectionRunnerStarter.class, () -> ElectionRunner.Builder::start)
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(ElectionMetrics.class);
          assertThat(context).hasSingleBean(ElectionRunnerStarter.class);
        });
  }

  @Test
  void withoutTheModuleNoMetricsBeanIsDefined() {
    contexts()
        .withClassLoader(new FilteredClassLoader(ElectionMetrics.class))
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean("electionMetrics");
          assertThat(context).doesNotHaveBean(ElectionRunnerStarter.class);
          assertThat(context).hasSingleBean(ElectionLifecycle.class);
        });
  }

  @Test
  void withElectionOffNoMetricsBeanIsDefined() {
    contexts()
        .withPropertyValues("election.enabled=false")
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(ElectionMetrics.class);
        });
  }

  private static org.springframework.boot.test.context.runner.ApplicationContextRunner contexts() {
    return Contexts.election()
        .withConfiguration(AutoConfigurations.of(ElectionMetricsAutoConfiguration.class))
        .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
        .withPropertyValues("election.lease-name=orders-controller", Contexts.UNELECTED);
  }

  @Test
  void thePagesDependencyIsTheModuleTheBomManages() throws IOException {
    assertThat(Docs.blockAfter("Micrometer (Actuator brings it)")).containsExactly(
        "<dependency>",
        "  <groupId>io.github.electionpolicy</groupId>",
        "  <artifactId>election-micrometer</artifactId>",
        "</dependency>");
    String bom = Files.readString(Path.of(System.getProperty("basedir", ".")).resolve("../election-bom/pom.xml")
        .normalize());
    assertThat(bom).contains("<artifactId>election-micrometer</artifactId>");
    assertThat(ElectionMetrics.class.getPackageName()).isEqualTo("io.github.electionpolicy.micrometer");
  }

  @Test
  void thePageShowsTheTaggedBinder() throws IOException {
    Path source = Path.of(System.getProperty("basedir", "."))
        .resolve("../election-spring-boot/src/test/java/io/github/electionpolicy/springboot/MetricsThroughAStarterTest.java")
        .normalize();
    List<String> lines = Files.readAllLines(source, StandardCharsets.UTF_8);
    List<String> bean = lines.subList(lines.indexOf("    // docs:start") + 1, lines.indexOf("    // docs:end"))
        .stream().map(line -> line.isEmpty() ? line : line.substring(4)).collect(Collectors.toList());

    assertThat(Docs.blockAfter("replaces the one the auto-configuration defines")).isEqualTo(bean);
  }
}
