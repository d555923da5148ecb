package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Before contending, SelfSubjectAccessReviews check that the Lease may be read, created and updated. */
class RbacPreflightTest {

  @RegisterExtension
  final MockApi api = new MockApi();
  private final ServiceLog log = new ServiceLog();

  @Test
  void missingVerbsFailTheStartNamingThemAndShowingTheRole() {
    api.answeringAccessReviews().denying(Set.of("create", "update"));

    assertThatThrownBy(() -> Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log))
        .isInstanceOfSatisfying(LeaseAccessDeniedException.class, e -> {
          assertThat(e.missingVerbs()).containsExactly("create", "update");
          assertThat(e.namespace()).isEqualTo(MockApi.NAMESPACE);
          assertThat(e.leaseName()).isEqualTo(MockApi.LEASE);
        })
        .hasMessageContaining("may not create, update leases")
        .hasMessageContaining("it needs get, create, update")
        .hasMessageContaining("kind: Role")
        .hasMessageContaining("namespace: " + MockApi.NAMESPACE)
        .hasMessageContaining(LeaseAccess.roleYaml(MockApi.NAMESPACE, MockApi.LEASE));
    assertThat(log.entries()).isEmpty();
    assertThat(api.lease()).isNull();
  }

  @Test
  void deniedWatchOnlyWarnsAndTheReplicaStillLeads() throws Exception {
    api.answeringAccessReviews().denying(Set.of("watch"));

    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
    }
  }

  @Test
  void refusedReviewApiOnlyWarnsAndTheReplicaStillLeads() throws Exception {
    api.server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .andReturn(403, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":403}")
        .always();

    try (Replica a = Replica.start("a", api.client(), MockApi.fastSettings("a").build(), log)) {
      assertThat(Replica.awaitTrue(a::leads, Duration.ofSeconds(5))).isTrue();
    }
  }

  @Test
  void preflightCanBeTurnedOff() throws Exception {
    api.answeringAccessReviews().denying(Set.of("get", "create", "update"));

    try (ElectionRunner runner = ElectionRunner.builder()
        .client(api.client())
        .decision(MockApi.CONTEND)
        .settings(MockApi.fastSettings("a").build())
        .service(log.service("a"))
        .rbacPreflight(false)
        .start()) {
      assertThat(Replica.awaitTrue(() -> runner.state().kind() == ElectionState.Kind.LEADING,
          Duration.ofSeconds(5))).isTrue();
    }
  }
}
