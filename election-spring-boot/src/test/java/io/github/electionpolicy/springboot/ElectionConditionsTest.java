package io.github.electionpolicy.springboot;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.github.electionpolicy.ElectionDecision;
import io.github.electionpolicy.ElectionPolicy;
import io.github.electionpolicy.Environment;
import io.github.electionpolicy.InvalidElectionSettingException;
import io.github.electionpolicy.Substrate;
import io.github.electionpolicy.fabric8.ElectionListener;
import io.github.electionpolicy.fabric8.ElectionRunner;
import io.github.electionpolicy.fabric8.ElectionState;
import io.github.electionpolicy.fabric8.LeaderService;
import io.github.electionpolicy.fabric8.LeaseSettings;
import io.github.electionpolicy.fabric8.LossHandler;
import io.github.electionpolicy.fabric8.LossPolicy;
import io.github.electionpolicy.testkit.fabric8.LeaseApiExtension;
import io.github.electionpolicy.testkit.fabric8.ReplicaLink;
import io.github.electionpolicy.testsupport.Await;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.beans.factory.NoUniqueBeanDefinitionException;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import io.github.electionpolicy.fabric8.Exiter;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Primary;
import org.springframework.core.annotation.Order;

/**
 * The auto-configuration's conditions and the beans it reads: each switched on and off, each against the
 * embedded Lease API where the runner contends.
 */
class ElectionConditionsTest {

  @RegisterExtension
  final LeaseApiExtension api = LeaseApiExtension.create();

  private final ServiceLog log = new ServiceLog();

  /** A contending context against the embedded Lease API, with fast timings and no exit on loss. */
  private ApplicationContextRunner contending(String identity) {
    return contending(api.replica(identity));
  }

  /** The same, through a replica link the test keeps, to count its requests or cut it off. */
  private ApplicationContextRunner contending(ReplicaLink replica) {
    String identity = replica.name();
    return Contexts.election()
        .withPropertyValues(Contexts.FAST_TIMINGS)
        .withPropertyValues("election.lease-name=orders-controller", "election.namespace=" + api.namespace(),
            "election.identity=" + identity, "election.loss-policy=recontend")
        .withBean(KubernetesClient.class, replica::client);
  }

  @Test
  void electionEnabledFalseTurnsTheWholeAutoConfigurationOff() {
    Contexts.election()
        .withPropertyValues("election.enabled=false", "election.lease-duration=not even a duration")
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          assertThat(context).hasNotFailed();
          assertThat(context).doesNotHaveBean(ElectionLifecycle.class);
          assertThat(context).doesNotHaveBean(LeaseSettings.class);
          assertThat(context).doesNotHaveBean(ElectionDecision.class);
          assertThat(log.events()).isEmpty();
        });
  }

  @Test
  void electionIsOnWhenEnabledIsTrueOrUnset() {
    Contexts.election()
        .withPropertyValues("election.enabled=true", "election.lease-name=a", Contexts.UNELECTED)
        .run(context -> assertThat(context).hasSingleBean(ElectionLifecycle.class));
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .run(context -> assertThat(context).hasSingleBean(ElectionLifecycle.class));
  }

  @Test
  void theLifecycleStartsWithTheContextAndClosesTheRunnerWithIt() {
    contending("replica-1")
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          assertThat(lifecycle.isRunning()).isTrue();
          assertThat(lifecycle.isAutoStartup()).isTrue();
          Await.until("replica-1 leads", () -> log.running().equals(Set.of("orders")));
          assertThat(lifecycle.state().kind()).isEqualTo(ElectionState.Kind.LEADING);
          assertThat(lifecycle.currentTerm()).hasValueSatisfying(term -> assertThat(term.isValid()).isTrue());
        });
    // The runner ran them and, closing with the context, stopped them and released the Lease.
    assertThat(log.events()).containsExactly("start orders", "stop orders");
    assertThat(api.leaseWrites("orders-controller")).last()
        .satisfies(write -> assertThat(write.holder()).isEmpty());
  }

  @Test
  void stoppingAndStartingTheContextStopsTheRunnerAndStartsANewOne() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          ConfigurableApplicationContext source = context.getSourceApplicationContext();
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);

          source.stop();
          assertThat(lifecycle.isRunning()).isFalse();
          assertThat(lifecycle.state().kind()).isEqualTo(ElectionState.Kind.STOPPED);
          assertThat(log.running()).isEmpty();

          source.start();
          assertThat(lifecycle.isRunning()).isTrue();
          assertThat(log.running()).containsExactly("orders");
        });
    assertThat(log.events()).containsExactly("start orders", "stop orders", "start orders", "stop orders");
  }

  @Test
  void everyLeaderServiceBeanRunsInOrderAndStopsInReverseOrder() {
    contending("replica-1")
        .withUserConfiguration(OrderedServices.class)
        .withBean(ServiceLog.class, () -> log)
        .run(context -> Await.until("both run", () -> log.running().size() == 2));

    assertThat(log.events()).containsExactly("start first", "start second", "stop second", "stop first");
  }

  @Configuration(proxyBeanMethods = false)
  static class OrderedServices {
    @Bean
    @Order(2)
    LeaderService second(ServiceLog log) {
      return log.service("second");
    }

    @Bean
    @Order(1)
    LeaderService first(ServiceLog log) {
      return log.service("first");
    }
  }

  @Test
  void withoutALeaderServiceBeanTheRunnerStillElects() {
    contending("replica-1").run(context -> {
      ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
      Await.until("it leads", () -> lifecycle.state().kind() == ElectionState.Kind.LEADING);
      assertThat(lifecycle.health().ready()).isTrue();
    });
  }

  @Test
  void theApplicationsKubernetesClientIsTheOneUsed() {
    ReplicaLink replica = api.replica("replica-1");
    contending(replica)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          Await.until("it leads", () -> log.running().equals(Set.of("orders")));
          assertThat(context.getBean(ElectionLifecycle.class).lastClient()).containsSame(replica.client());
          assertThat(replica.requestCount()).isPositive();
        });
  }

  @Test
  void withoutAClientBeanTheLifecycleMakesItsOwnAndClosesItOnShutdown() {
    KubernetesClient[] made = new KubernetesClient[1];
    // fabric8 reads its master URL from system properties; the lifecycle's own client is configured as a
    // controller's would be, here pointing at the embedded server, and with no kubeconfig.
    withFabric8SystemProperties(Map.of("kubernetes.master", api.replica("own").url(),
        "kubernetes.namespace", api.namespace(), "kubernetes.auth.tryKubeConfig", "false",
        "kubernetes.auth.tryServiceAccount", "false"), () -> Contexts.election()
        .withPropertyValues(Contexts.FAST_TIMINGS)
        .withPropertyValues("election.lease-name=orders-controller", "election.identity=own",
            "election.loss-policy=recontend")
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          assertThat(context).doesNotHaveBean(KubernetesClient.class);
          Await.until("it leads through its own client", () -> log.running().equals(Set.of("orders")));
          made[0] = context.getBean(ElectionLifecycle.class).lastClient().orElseThrow();
          assertThat(made[0].getNamespace()).isEqualTo(api.namespace());
        }));

    assertThat(api.leaseWrites("orders-controller")).extracting(w -> w.holder()).containsSubsequence("own", "");
    assertThatThrownBy(() -> made[0].leases().list())
        .as("the lifecycle's own client is closed with the context").isInstanceOf(IllegalStateException.class);
  }

  private static void withFabric8SystemProperties(Map<String, String> properties, Runnable body) {
    properties.forEach(System::setProperty);
    try {
      body.run();
    } finally {
      properties.keySet().forEach(System::clearProperty);
    }
  }

  @Test
  void twoClientBeansWithoutAPrimaryFailTheStartInsteadOfGuessing() {
    contending("replica-1")
        .withBean("otherClient", KubernetesClient.class, () -> api.replica("other").client())
        .run(context -> {
          assertThat(context).hasFailed();
          assertThat(context.getStartupFailure()).hasRootCauseInstanceOf(NoUniqueBeanDefinitionException.class);
        });
  }

  @Test
  void ofTwoClientBeansThePrimaryIsUsed() {
    ReplicaLink primary = api.replica("primary");
    Contexts.election()
        .withPropertyValues(Contexts.FAST_TIMINGS)
        .withPropertyValues("election.lease-name=orders-controller", "election.namespace=" + api.namespace(),
            "election.loss-policy=recontend")
        .withBean("secondary", KubernetesClient.class, () -> api.replica("secondary").client())
        .withBean("primary", KubernetesClient.class, primary::client, definition -> definition.setPrimary(true))
        .run(context -> assertThat(context.getBean(ElectionLifecycle.class).lastClient())
            .containsSame(primary.client()));
  }

  @Test
  void electionListenerBeansHearTheRunner() {
    List<ElectionState.Kind> states = new CopyOnWriteArrayList<>();
    contending("replica-1")
        .withBean(ElectionListener.class, () -> new ElectionListener() {
          @Override
          public void stateChanged(ElectionState previous, ElectionState current) {
            states.add(current.kind());
          }
        })
        .run(context -> Await.until("the listener heard the election", () -> states.contains(
            ElectionState.Kind.LEADING)));
  }

  @Test
  void customizersAdjustTheBuilderAfterTheProperties() {
    contending("replica-1")
        .withBean(ElectionRunnerCustomizer.class, () -> builder -> builder.service(log.service("added")))
        .run(context -> Await.until("the customizer's service runs", () -> log.running().contains("added")));
  }

  @Test
  void anElectionRunnerStarterBeanStartsTheRunnerFromThePreparedBuilder() {
    List<ElectionRunner> started = new CopyOnWriteArrayList<>();
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .withBean(ElectionRunnerStarter.class, () -> builder -> {
          ElectionRunner runner = builder.start();
          started.add(runner);
          return runner;
        })
        .run(context -> {
          assertThat(started).singleElement()
              .isSameAs(context.getBean(ElectionLifecycle.class).runner().orElseThrow());
          assertThat(log.running()).containsExactly("orders");
        });
  }

  @Test
  void twoElectionRunnerStartersFailTheStart() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withBean("one", ElectionRunnerStarter.class, () -> ElectionRunner.Builder::start)
        .withBean("other", ElectionRunnerStarter.class, () -> ElectionRunner.Builder::start)
        .run(context -> {
          assertThat(context).hasFailed();
          assertThat(context.getStartupFailure()).hasRootCauseInstanceOf(NoUniqueBeanDefinitionException.class);
        });
  }

  @Test
  void aCustomizerThatThrowsFailsTheStart() {
    contending("replica-1")
        .withBean(ElectionRunnerCustomizer.class, () -> builder -> {
          throw new IllegalStateException("customizer refused");
        })
        .run(context -> {
          assertThat(context).hasFailed();
          assertThat(context.getStartupFailure()).hasRootCauseMessage("customizer refused");
        });
  }

  @Test
  void theApplicationsBeansReplaceEveryBeanOfTheAutoConfiguration() {
    Environment environment = Environment.of(Map.of("LEADER_ELECTION_ENABLED", "false"));
    ElectionDecision decision = ElectionPolicy.defaults().decide(environment, Substrate.usingKubernetesApi("k"));
    LeaseSettings settings = LeaseSettings.builder().leaseName("from-a-bean").build();
    Contexts.election()
        .withBean(Environment.class, () -> environment)
        .withBean(ElectionDecision.class, () -> decision)
        .withBean(LeaseSettings.class, () -> settings)
        .run(context -> {
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          assertThat(lifecycle.decision()).isSameAs(decision);
          assertThat(lifecycle.settings()).isSameAs(settings);
        });
  }

  @Test
  void theCoreEnvironmentBeanIsWhereTheKillSwitchIsRead() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", "LEADER_ELECTION_ENABLED=true")
        .withBean(Environment.class, () -> Environment.of(Map.of("LEADER_ELECTION_ENABLED", "off")))
        .run(context -> assertThat(context.getBean(ElectionDecision.class).outcome())
            .isEqualTo(ElectionDecision.Outcome.RUN_UNELECTED));
  }

  @Test
  void unelectedTheServicesStartAtOnceWithAnUnelectedTerm() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          // start() returns once they started: no waiting needed.
          assertThat(log.running()).containsExactly("orders");
          assertThat(log.terms()).singleElement().satisfies(term -> assertThat(term.isElected()).isFalse());
          assertThat(context.getBean(ElectionLifecycle.class).health().ready()).isTrue();
          assertThat(context.getBean(ElectionLifecycle.class).lastClient()).isEmpty();
        });
    assertThat(log.events()).containsExactly("start orders", "stop orders");
  }

  @Test
  void unelectedAServiceThatFailsToStartFailsTheContext() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED)
        .withBean(LeaderService.class, () -> LeaderService.of(term -> {
          throw new IllegalStateException("no database");
        }, () -> { }))
        .run(context -> assertThat(context).hasFailed());
  }

  @Test
  void aNamespaceThatCannotBeResolvedFailsTheStartWithTheLibrarysMessage() {
    KubernetesClient withoutNamespace = new io.fabric8.kubernetes.client.KubernetesClientBuilder()
        .withConfig(new io.fabric8.kubernetes.client.ConfigBuilder(api.client().getConfiguration())
            .withNamespace(null).build())
        .build();
    try {
      Contexts.election()
          .withPropertyValues("election.lease-name=a", "election.loss-policy=recontend")
          .withBean(KubernetesClient.class, () -> withoutNamespace)
          .run(context -> {
            assertThat(context).hasFailed();
            assertThat(Contexts.settingFailure(context.getStartupFailure()).setting()).isEqualTo("namespace");
          });
    } finally {
      withoutNamespace.close();
    }
  }

  @Test
  void lossPolicyExitClosesTheContextThenCallsTheExiterBeanWithStatusOne() {
    ReplicaLink replica = api.replica("replica-1");
    RecordingExiter exiter = new RecordingExiter();
    contending(replica)
        .withPropertyValues("election.loss-policy=exit")
        .withBean(Exiter.class, () -> exiter)
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          LossPolicy policy = context.getBean(LeaseSettings.class).lossPolicy();
          assertThat(((LossPolicy.Exit) policy).exiter()).isInstanceOf(ContextClosingExiter.class);
          Await.until("it leads", () -> log.running().contains("orders"));

          replica.partition(); // its renewals hang: it loses the Lease at its renew deadline

          Await.until("the exiter was called", () -> !exiter.calls.isEmpty());
          // The context was closed (the services stopped, the runner closed) before the process exit.
          assertThat(exiter.calls).containsExactly("exit 1 with the context closed");
          assertThat(log.events()).containsExactly("start orders", "stop orders");
        });
  }

  /** Records each exit and whether the context was still active when it came. */
  static final class RecordingExiter implements Exiter, ApplicationContextAware {
    final List<String> calls = new CopyOnWriteArrayList<>();
    private volatile ConfigurableApplicationContext context;

    @Override
    public void setApplicationContext(ApplicationContext context) {
      this.context = (ConfigurableApplicationContext) context;
    }

    @Override
    public void exit(int status) {
      calls.add("exit " + status + (context.isActive() ? " with the context active" : " with the context closed"));
    }
  }

  @Test
  void lossPolicyCustomUsesTheLossHandlerBean() {
    LossHandler handler = lostTerm -> LossHandler.AfterLoss.RECONTEND;
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED, "election.loss-policy=custom")
        .withBean(LossHandler.class, () -> handler)
        .run(context -> assertThat(context.getBean(LeaseSettings.class).lossPolicy())
            .isEqualTo(LossPolicy.custom(handler)));
  }

  @Test
  void lossPolicyCustomWithoutALossHandlerBeanFailsNamingTheProperty() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED, "election.loss-policy=custom")
        .run(context -> {
          assertThat(context).hasFailed();
          InvalidElectionSettingException failure = Contexts.settingFailure(context.getStartupFailure());
          assertThat(failure.setting()).isEqualTo("election.loss-policy");
          assertThat(failure).hasMessageStartingWith("election.loss-policy=\"custom\" is not valid: accepted values "
              + "are exit, recontend, or custom with a LossHandler bean in the context");
        });
  }

  @Test
  void aLossHandlerBeanIsIgnoredUnlessThePolicyIsCustom() {
    Contexts.election()
        .withPropertyValues("election.lease-name=a", Contexts.UNELECTED, "election.loss-policy=recontend")
        .withBean(LossHandler.class, () -> lostTerm -> LossHandler.AfterLoss.STOP)
        .run(context -> assertThat(context.getBean(LeaseSettings.class).lossPolicy())
            .isEqualTo(LossPolicy.recontend()));
  }

  @Test
  void rbacPreflightOnStopsTheRunnerWhenTheLeaseMayNotBeUpdated() {
    api.denyAccess(Set.of("update"));
    contending("replica-1")
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> {
          ElectionLifecycle lifecycle = context.getBean(ElectionLifecycle.class);
          Await.until("the preflight stopped it",
              () -> lifecycle.state().kind() == ElectionState.Kind.STOPPED);
          assertThat(lifecycle.runner().orElseThrow().startupFailure()).isPresent();
          assertThat(log.events()).isEmpty();
        });
  }

  @Test
  void rbacPreflightOffContendsWithoutAsking() {
    api.denyAccess(Set.of("update"));
    contending("replica-1")
        .withPropertyValues("election.rbac-preflight=false")
        .withBean(LeaderService.class, () -> log.service("orders"))
        .run(context -> Await.until("it leads without a preflight", () -> log.running().contains("orders")));
  }
}
