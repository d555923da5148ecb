package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.LeaseWrite;
import io.github.electionpolicy.testsupport.Await;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;

/**
 * Two replicas of a Spring Boot application, each a real {@code SpringApplication} with every auto-configuration
 * on the class path, against one embedded Lease API: exactly one runs its {@code LeaderService} bean, and
 * closing its context (what SIGTERM does through Spring Boot's shutdown hook) hands the Lease to the other.
 */
class TwoApplicationsTest {

  private static final String LEASE = "orders-controller";

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final ServiceLog log = new ServiceLog();

  /** The application: one leader-only service, named after the replica. */
  @SpringBootConfiguration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class OrdersApplication {
    @Bean
    LeaderService ordersReconciler(ServiceLog log, @Value("${election.identity}") String replica) {
      return log.service(replica);
    }
  }

  /** Starts one replica as its main would, given the fixture's client for it as the KubernetesClient bean. */
  private ConfigurableApplicationContext start(String replica) {
    KubernetesClient client = api.replica(replica).client();
    return new SpringApplicationBuilder(OrdersApplication.class)
        .web(WebApplicationType.NONE)
        .initializers(context -> {
          context.getBeanFactory().registerSingleton("kubernetesClient", client);
          context.getBeanFactory().registerSingleton("serviceLog", log);
        })
        .run("--spring.main.banner-mode=off", "--election.lease-name=" + LEASE,
            "--election.namespace=" + api.namespace(), "--election.identity=" + replica,
            "--election.lease-duration=2s", "--election.renew-deadline=1500ms", "--election.retry-period=200ms",
            "--election.loss-policy=recontend");
  }

  @Test
  void exactlyOneApplicationLeadsAndClosingItsContextHandsOver() throws InterruptedException {
    try (ConfigurableApplicationContext first = start("replica-1");
        ConfigurableApplicationContext second = start("replica-2")) {
      Await.until("one replica runs its LeaderService bean", () -> log.running().size() == 1);
      String leader = log.running().iterator().next();
      // Three of the leader's renewals (retry periods): the follower must not start its service too.
      long renewed = writesBy(leader);
      Await.until("three more renewals by " + leader, () -> writesBy(leader) >= renewed + 3);
      assertThat(log.running()).hasSize(1);
      String follower = leader.equals("replica-1") ? "replica-2" : "replica-1";
      ConfigurableApplicationContext leading = leader.equals("replica-1") ? first : second;
      ConfigurableApplicationContext following = leading == first ? second : first;
      assertThat(log.events()).containsExactly("start " + leader);
      Await.until(follower + " follows " + leader, () -> following.getBean(ElectionLifecycle.class).state()
          .equals(new ElectionState.Following(Optional.of(leader))));

      leading.close(); // stops the service, releases the Lease, then destroys the beans

      Await.until(follower + " took over", () -> log.running().equals(Set.of(follower)));
      assertThat(log.events()).containsExactly("start " + leader, "stop " + leader, "start " + follower);
      assertThat(api.leaseWrites(LEASE)).extracting(LeaseWrite::holder)
          .containsSubsequence(leader, "", follower); // released, then taken over
      assertThat(following.getBean(ElectionLifecycle.class).state().kind()).isEqualTo(ElectionState.Kind.LEADING);
    }
    assertThat(log.running()).isEmpty();
  }

  /** How many Lease writes the server accepted that left {@code holder} in the Lease. */
  private long writesBy(String holder) {
    return api.leaseWrites(LEASE).stream().filter(w -> w.holder().equals(holder)).count();
  }
}
