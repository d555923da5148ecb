package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeadershipTerm;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.json.JsonParserFactory;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * The {@code election} Actuator endpoint as an operator reads it: web applications exposed exactly as
 * docs/spring-boot.md says, a real fabric8 client per replica against the embedded Lease API, and
 * {@code GET /actuator/election} over HTTP, its JSON parsed as a client would. Runs on Spring Boot 4 (Jackson 3)
 * and, in election-spring-boot-compat3, on Spring Boot 3.5 (Jackson 2): the same fields on both.
 */
class ElectionEndpointOverHttpTest {

  private static final String LEASE = "orders-controller";
  private static final String PATH = "/actuator/election";

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final ServiceLog log = new ServiceLog();

  /** A web application with Actuator and one leader-only service. */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class DescribedApplication {
    @Bean
    LeaderService ordersReconciler(ServiceLog log, @Value("${election.identity}") String replica) {
      return log.service(replica);
    }
  }

  private ConfigurableApplicationContext start(ReplicaLink replica) {
    Path exposure = Docs.writeBlock("<!-- election endpoint exposure -->", "election-endpoint.properties");
    KubernetesClient client = replica.client();
    return new SpringApplicationBuilder(DescribedApplication.class)
        .initializers(context -> {
          context.getBeanFactory().registerSingleton("kubernetesClient", client);
          context.getBeanFactory().registerSingleton("serviceLog", log);
        })
        .run("--spring.main.banner-mode=off", "--server.port=0",
            "--spring.config.additional-location=file:" + exposure.toAbsolutePath(),
            "--election.lease-name=" + LEASE, "--election.namespace=" + api.namespace(),
            "--election.identity=" + replica.name(),
            "--election.lease-duration=2s", "--election.renew-deadline=1500ms", "--election.retry-period=200ms",
            "--election.loss-policy=recontend");
  }

  @Test
  void theLeaderAndTheFollowerEachDescribeTheElectionAsTheySeeIt() {
    try (ConfigurableApplicationContext first = start(api.replica("replica-1"));
        ConfigurableApplicationContext second = start(api.replica("replica-2"))) {
      Await.until("one replica leads", () -> log.running().size() == 1);
      String leader = log.running().iterator().next();
      String follower = leader.equals("replica-1") ? "replica-2" : "replica-1";
      ConfigurableApplicationContext leading = leader.equals("replica-1") ? first : second;
      ConfigurableApplicationContext following = leading == first ? second : first;

      Map<String, Object> led = awaitAnswer(leading, "the leader answers LEADING with a renewal",
          json -> "LEADING".equals(json.get("state")) && !list(json, "renewals").isEmpty());
      // The term the leader's LeaderService was started with: its Lease's leaseTransitions and acquireTime.
      LeadershipTerm started = log.terms().get(0);
      assertThat(led).containsEntry("identity", leader).containsEntry("holder", leader);
      Map<String, Object> term = map(led, "term");
      assertThat(((Number) term.get("leaseTransitions")).longValue()).as("the fencing token of the service's term")
          .isEqualTo(started.leaseTransitions());
      assertThat(term).containsEntry("valid", true).containsEntry("elected", true);
      assertThat(Instant.parse((String) term.get("acquireTime"))).as("the acquire time of the service's term")
          .isEqualTo(started.acquireTime());
      assertThat(map(led, "lease")).containsEntry("namespace", api.namespace()).containsEntry("name", LEASE);
      assertThat(((Number) map(led, "lease").get("renewDeadlineMillis")).longValue()).isEqualTo(1500);
      ElectionDecision decision = leading.getBean(ElectionDecision.class);
      assertThat(map(led, "decision")).containsEntry("outcome", "CONTEND")
          .containsEntry("reasons", List.of("SUBSTRATE_USES_KUBERNETES_API"))
          .containsEntry("summary", decision.summary());
      Map<String, Object> renewal = list(led, "renewals").get(0);
      assertThat(Instant.parse((String) renewal.get("time"))).as("an ISO-8601 instant").isNotNull();
      assertThat(((Number) renewal.get("roundTripMillis")).longValue()).isNotNegative();
      assertThat(list(led, "renewFailures")).isEmpty();

      Map<String, Object> followed = awaitAnswer(following, "the follower answers FOLLOWING the leader",
          json -> "FOLLOWING".equals(json.get("state")) && leader.equals(json.get("holder")));
      assertThat(followed).containsEntry("identity", follower)
          .as("a follower has no term").doesNotContainKey("term");
      assertThat(map(followed, "lease")).containsEntry("name", LEASE);
      assertThat(list(followed, "renewals")).as("a follower never renews").isEmpty();
    }
  }

  @Test
  void aLeaderCutOffFromTheApiServerListsItsFailedRenewalsBesideItsLastSuccessfulOnes() {
    ReplicaLink replica = api.replica("replica-1");
    try (ConfigurableApplicationContext only = start(replica)) {
      awaitAnswer(only, "the leader has renewed", json -> !list(json, "renewals").isEmpty());

      replica.refuseConnections();

      Map<String, Object> cut = awaitAnswer(only, "a failed renewal is listed",
          json -> !list(json, "renewFailures").isEmpty());
      Map<String, Object> failure = list(cut, "renewFailures").get(0);
      assertThat((String) failure.get("cause")).as("what failed, in one line").isNotBlank().doesNotContain("\n");
      assertThat(Instant.parse((String) failure.get("time"))).as("an ISO-8601 instant").isNotNull();
      assertThat(((Number) failure.get("sinceLastRenewalMillis")).longValue()).isNotNegative();
      assertThat(list(cut, "renewals")).as("the last successful renewals are still listed").isNotEmpty();
    }
  }

  @Test
  void theAnswerOnThePageHasTheFieldsOfARealAnswer() {
    Map<String, Object> example = JsonParserFactory.getJsonParser()
        .parseMap(String.join("\n", Docs.blockAfter("<!-- election endpoint answer -->")));
    ReplicaLink replica = api.replica("replica-1");
    try (ConfigurableApplicationContext only = start(replica)) {
      Map<String, Object> leading = awaitAnswer(only, "the leader has renewed",
          json -> "LEADING".equals(json.get("state")) && !list(json, "renewals").isEmpty());
      assertSameFields("the answer", example, leading);

      replica.refuseConnections();
      Map<String, Object> failed = awaitAnswer(only, "a failed renewal is listed",
          json -> !list(json, "renewFailures").isEmpty());
      assertSameFields("renewFailures", example.get("renewFailures"), failed.get("renewFailures"));
    }
  }

  /**
   * Fails unless {@code actual} has exactly the fields of {@code example}, at every level (a list: the fields of
   * its first element, when both have one).
   */
  private static void assertSameFields(String path, Object example, Object actual) {
    if (example instanceof Map) {
      assertThat(actual).as(path).isInstanceOf(Map.class);
      Map<?, ?> expected = (Map<?, ?>) example;
      assertThat(fieldNames((Map<?, ?>) actual)).as("the fields of %s", path)
          .containsExactlyInAnyOrderElementsOf(fieldNames(expected));
      expected.forEach((key, value) -> assertSameFields(path + "." + key, value, ((Map<?, ?>) actual).get(key)));
    } else if (example instanceof List) {
      assertThat(actual).as(path).isInstanceOf(List.class);
      List<?> expected = (List<?>) example;
      if (!expected.isEmpty() && !((List<?>) actual).isEmpty()) {
        assertSameFields(path + "[0]", expected.get(0), ((List<?>) actual).get(0));
      }
    }
  }

  private static List<String> fieldNames(Map<?, ?> object) {
    return object.keySet().stream().map(String::valueOf).collect(Collectors.toList());
  }

  /** The first answer that satisfies {@code condition}; fails naming {@code what} if none comes in time. */
  private static Map<String, Object> awaitAnswer(ConfigurableApplicationContext context, String what,
      Predicate<Map<String, Object>> condition) {
    AtomicReference<Map<String, Object>> answer = new AtomicReference<>();
    Await.until(what, () -> {
      Map<String, Object> json = get(context);
      answer.set(json);
      return json != null && condition.test(json);
    });
    return answer.get();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Map<String, Object> json, String field) {
    assertThat(json).as("a field %s", field).containsKey(field);
    return (Map<String, Object>) json.get(field);
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> json, String field) {
    assertThat(json).as("a field %s", field).containsKey(field);
    return (List<Map<String, Object>>) json.get(field);
  }

  /** The endpoint's answer, parsed; null if it did not answer 200. */
  private static Map<String, Object> get(ConfigurableApplicationContext context) {
    int port = context.getEnvironment().getRequiredProperty("local.server.port", Integer.class);
    try {
      HttpResponse<String> response = HttpClient.newHttpClient().send(
          HttpRequest.newBuilder(URI.create("http://localhost:" + port + PATH)).timeout(Duration.ofSeconds(5))
              .build(), HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        return null;
      }
      assertThat(response.headers().firstValue("Content-Type")).as("a JSON answer")
          .hasValueSatisfying(type -> assertThat(type).contains("json"));
      return JsonParserFactory.getJsonParser().parseMap(response.body());
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }
}
