package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.github.electionpolicy.fabric8.LeaseAccess.Verdict;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The RBAC review on its own, as operator tools call it, against a server that answers access reviews. */
class LeaseAccessTest {

  @RegisterExtension
  final MockApi api = new MockApi();

  @Test
  void everyVerbAllowedIsGranted() {
    api.answeringAccessReviews();

    LeaseAccess access = LeaseAccess.review(api.client(), MockApi.NAMESPACE, MockApi.LEASE);

    assertThat(access).isEqualTo(new LeaseAccess(Verdict.GRANTED, List.of(), false, Optional.empty()));
  }

  @Test
  void deniedRequiredVerbsAreNamedInOrder() {
    api.answeringAccessReviews().denying(Set.of("update", "get"));

    LeaseAccess access = LeaseAccess.review(api.client(), MockApi.NAMESPACE, MockApi.LEASE);

    assertThat(access.verdict()).isEqualTo(Verdict.DENIED);
    assertThat(access.deniedVerbs()).containsExactly("get", "update");
  }

  @Test
  void deniedWatchIsGrantedWithAdvice() {
    api.answeringAccessReviews().denying(Set.of("watch"));

    LeaseAccess access = LeaseAccess.review(api.client(), MockApi.NAMESPACE, MockApi.LEASE);

    assertThat(access.verdict()).isEqualTo(Verdict.GRANTED);
    assertThat(access.watchDenied()).isTrue();
  }

  @Test
  void refusedReviewApiIsUnknownWithTheReason() {
    api.server.expect().post().withPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
        .andReturn(403, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":403}")
        .always();

    LeaseAccess access = LeaseAccess.review(api.client(), MockApi.NAMESPACE, MockApi.LEASE);

    assertThat(access.verdict()).isEqualTo(Verdict.UNKNOWN);
    assertThat(access.unknownReason()).get().asString()
        .startsWith("the SelfSubjectAccessReview for \"get\" failed");
  }

  @Test
  void componentsMustAgreeWithTheVerdict() {
    assertThatThrownBy(() -> new LeaseAccess(Verdict.DENIED, List.of(), false, Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new LeaseAccess(Verdict.GRANTED, List.of("get"), false, Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new LeaseAccess(Verdict.UNKNOWN, List.of(), false, Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new LeaseAccess(Verdict.DENIED, List.of("get"), true, Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
