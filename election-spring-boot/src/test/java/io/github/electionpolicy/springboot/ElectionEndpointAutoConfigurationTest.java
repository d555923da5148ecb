package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.electionpolicy.fabric8.ElectionListener;
import java.time.Clock;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.convert.ApplicationConversionService;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.convert.support.ConfigurableConversionService;

/**
 * When the {@code election} endpoint and its renewal history are defined, and what the endpoint reads from an
 * unelected runner (no API server needed). Over HTTP, against a Lease: ElectionEndpointOverHttpTest.
 */
class ElectionEndpointAutoConfigurationTest {

  private static final String EXPOSED = "management.endpoints.web.exposure.include=health,election";

  private static ApplicationContextRunner withEndpoint() {
    return new ApplicationContextRunner().withConfiguration(
        AutoConfigurations.of(ElectionAutoConfiguration.class, ElectionEndpointAutoConfiguration.class))
        .withPropertyValues("election.lease-name=orders-controller", "election.identity=replica-1",
            Contexts.UNELECTED);
  }

  @Test
  void anUnexposedEndpointIsNotDefinedAndNothingListensToTheRunner() {
    withEndpoint().run(context -> assertThat(context).hasSingleBean(ElectionLifecycle.class)
        .doesNotHaveBean(ElectionEndpoint.class).doesNotHaveBean(ElectionListener.class));
  }

  @Test
  void anExposedEndpointIsDefinedWithItsRenewalHistoryAsAListenerOfTheRunner() {
    withEndpoint().withPropertyValues(EXPOSED).run(context -> assertThat(context)
        .hasSingleBean(ElectionEndpoint.class).hasSingleBean(RenewalHistory.class)
        .getBean(ElectionListener.class).isSameAs(context.getBean(RenewalHistory.class)));
  }

  @Test
  void accessNoneTurnsTheEndpointAndItsHistoryOff() {
    withEndpoint().withPropertyValues(EXPOSED, "management.endpoint.election.access=none")
        // As SpringApplication does: Boot's conversions read "none" as Access.NONE.
        .withInitializer(context -> context.getEnvironment()
            .setConversionService((ConfigurableConversionService) ApplicationConversionService.getSharedInstance()))
        .run(context -> assertThat(context).hasSingleBean(ElectionLifecycle.class)
            .doesNotHaveBean(ElectionEndpoint.class).doesNotHaveBean(ElectionListener.class));
  }

  @Test
  void withoutTheElectionThereIsNoEndpoint() {
    withEndpoint().withPropertyValues(EXPOSED, "election.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(ElectionEndpoint.class));
  }

  @Test
  void withoutActuatorThereIsNoEndpoint() {
    withEndpoint().withPropertyValues(EXPOSED)
        .withClassLoader(new FilteredClassLoader("org.springframework.boot.actuate"))
        .run(context -> assertThat(context).hasSingleBean(ElectionLifecycle.class)
            .doesNotHaveBean("electionEndpoint").doesNotHaveBean("electionRenewalHistory"));
  }

  /** An application that defines an endpoint of its own. */
  @Configuration(proxyBeanMethods = false)
  static class OwnEndpoint {
    @Bean
    ElectionEndpoint myEndpoint(ElectionLifecycle election) {
      return new ElectionEndpoint(election, new RenewalHistory(Clock.systemUTC()));
    }
  }

  @Test
  void anEndpointOfTheApplicationsReplacesTheAutoConfiguredOne() {
    withEndpoint().withPropertyValues(EXPOSED).withUserConfiguration(OwnEndpoint.class)
        .run(context -> assertThat(context).hasSingleBean(ElectionEndpoint.class).hasBean("myEndpoint"));
  }

  @Test
  void anUnelectedRunnerIsDescribedWithItsUnelectedTermAndNoLease() {
    withEndpoint().withPropertyValues(EXPOSED).run(context -> {
      ElectionDescriptor election = context.getBean(ElectionEndpoint.class).election();

      assertThat(election.state()).isEqualTo("NOT_CONTENDING");
      assertThat(election.identity()).isEqualTo("replica-1");
      assertThat(election.holder()).as("no Lease, no holder").isNull();
      assertThat(election.lease()).isNull();
      assertThat(election.term().elected()).isFalse();
      assertThat(election.term().valid()).isTrue();
      assertThat(election.term().leaseTransitions()).isZero();
      assertThat(election.decision().outcome()).isEqualTo("RUN_UNELECTED");
      assertThat(election.decision().reasons()).containsExactly("KILL_SWITCH_OFF");
      assertThat(election.decision().summary())
          .isEqualTo(context.getBean(ElectionLifecycle.class).decision().summary());
      assertThat(election.renewals()).isEmpty();
      assertThat(election.renewFailures()).isEmpty();
    });
  }
}
