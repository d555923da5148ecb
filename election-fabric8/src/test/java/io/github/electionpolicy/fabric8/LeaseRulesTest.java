package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRule;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceRuleBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectRulesReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectRulesReviewStatus;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * What the preflight's rules review shows allowed, judged as RBAC's {@code RuleAllows} judges a request: one row
 * per case of its matching (verbs, groups, resources, names, wildcards), and the Role of {@code
 * docs/deploy/rbac.yaml} and the one {@link LeaseAccess#roleYaml} prints, which must each grant everything the
 * runner needs. That the listed rules agree with the server's own access reviews is checked on a real
 * kube-apiserver (RbacIT in election-apiserver-tests).
 */
class LeaseRulesTest {

  private static ResourceRule rule(String groups, String resources, String names, String verbs) {
    return new ResourceRuleBuilder().withApiGroups(split(groups)).withResources(split(resources))
        .withResourceNames(split(names)).withVerbs(split(verbs)).build();
  }

  /** Space-separated; {@code ~} is the empty string (the core API group), and nothing is an empty list. */
  private static List<String> split(String values) {
    return values.isEmpty() ? List.of()
        : java.util.Arrays.stream(values.split(" ")).map(v -> v.equals("~") ? "" : v).toList();
  }

  private static LeaseRules rules(ResourceRule... rules) {
    SubjectRulesReviewStatus status = new SubjectRulesReviewStatus();
    status.setResourceRules(List.of(rules));
    SelfSubjectRulesReview answer = LeaseRules.question("shop");
    answer.setStatus(status);
    // Read as the preflight reads the server's answer: its JSON, untyped. The typed reading must agree.
    LeaseRules parsed = parse(Serialization.asJson(answer));
    assertThat(parsed.rules()).isEqualTo(LeaseRules.of(answer).rules());
    return parsed;
  }

  private static LeaseRules parse(String json) {
    return LeaseRules.parse(Serialization.unmarshal(json, java.util.Map.class));
  }

  @Test
  void theQuestionIsTheTypedQuestionAsJson() {
    assertThat(Serialization.unmarshal(LeaseRules.questionJson("shop"), SelfSubjectRulesReview.class))
        .isEqualTo(LeaseRules.question("shop"));
  }

  @Test
  void anAnswerWithoutRulesOrWithGarbledOnesAllowsNothingItWouldNotWhole() {
    assertThat(parse("{}").grantRequired("orders-controller")).isFalse();
    assertThat(parse("{\"status\":{\"resourceRules\":\"all\"}}").allows("", "events", "create", null)).isFalse();
    // verbs garbled: that rule allows nothing; the other still allows what it lists
    LeaseRules garbled = parse("{\"status\":{\"resourceRules\":["
        + "{\"apiGroups\":[\"*\"],\"resources\":[\"*\"],\"verbs\":\"*\"},"
        + "{\"apiGroups\":[\"\"],\"resources\":[\"events\"],\"verbs\":[\"create\", 7]},"
        + "{\"apiGroups\":[\"coordination.k8s.io\"],\"resources\":[\"leases\"],\"verbs\":[\"get\"]}]}}");
    assertThat(garbled.allowsOnLease("update", "orders-controller")).isFalse();
    assertThat(garbled.allowsEvents()).isFalse();
    assertThat(garbled.allowsOnLease("get", "orders-controller")).isTrue();
  }

  /**
   * rule (groups | resources | names | verbs, space-separated; {@code ~} the core group) and request (resource,
   * verb, name, group): allowed?
   */
  @ParameterizedTest(name = "[{0}|{1}|{2}|{3}] allows {5} {4}/{6} in group \"{7}\": {8}")
  @CsvSource(delimiter = ',', nullValues = "NULL", textBlock = """
      coordination.k8s.io, leases, '',     get update watch, leases, get,    lease-a, coordination.k8s.io, true
      coordination.k8s.io, leases, '',     get,              leases, update, lease-a, coordination.k8s.io, false
      coordination.k8s.io, leases, lease-a, get,             leases, get,    lease-a, coordination.k8s.io, true
      coordination.k8s.io, leases, lease-a, get,             leases, get,    lease-b, coordination.k8s.io, false
      coordination.k8s.io, leases, lease-a, create,          leases, create, NULL,    coordination.k8s.io, false
      coordination.k8s.io, leases, '',     create,           leases, create, NULL,    coordination.k8s.io, true
      coordination.k8s.io, '*',    '',     get,              leases, get,    lease-a, coordination.k8s.io, true
      '*',                 leases, '',     get,              leases, get,    lease-a, coordination.k8s.io, true
      coordination.k8s.io, leases, '',     '*',              leases, update, lease-a, coordination.k8s.io, true
      ~,                   leases, '',     get,              leases, get,    lease-a, coordination.k8s.io, false
      coordination.k8s.io, pods,   '',     get,              leases, get,    lease-a, coordination.k8s.io, false
      coordination.k8s.io, leases/status, '', get,           leases, get,    lease-a, coordination.k8s.io, false
      coordination.k8s.io, '',     '',     get,              leases, get,    lease-a, coordination.k8s.io, false
      ~,                   events, '',     create,           events, create, NULL,    '',                  true
      coordination.k8s.io, events, '',     create,           events, create, NULL,    '',                  false
      '*',                 '*',    '',     '*',              events, create, NULL,    '',                  true
      """)
  void oneRule(String groups, String resources, String names, String verbs, String resource, String verb,
      String name, String group, boolean allowed) {
    assertThat(rules(rule(groups, resources, names, verbs)).allows(group, resource, verb, name)).isEqualTo(allowed);
  }

  @Test
  void anyOfSeveralRulesMayAllowAndNoRulesAllowNothing() {
    LeaseRules two = rules(rule("coordination.k8s.io", "leases", "", "create"),
        rule("coordination.k8s.io", "leases", "orders-controller", "get update"));
    assertThat(two.grantRequired("orders-controller")).isTrue();
    assertThat(two.grantRequired("another")).isFalse();
    assertThat(two.allowsOnLease("watch", "orders-controller")).isFalse();
    assertThat(rules().grantRequired("orders-controller")).isFalse();
    assertThat(LeaseRules.of(null).grantRequired("orders-controller")).isFalse();
    assertThat(LeaseRules.of(LeaseRules.question("shop")).allowsEvents()).as("an answer without status").isFalse();
  }

  @Test
  void theRoleOfDocsRbacYamlAndTheOneTheAdapterPrintsGrantEverythingTheRunnerUses() throws Exception {
    Path manifest = Path.of(System.getProperty("basedir", ".")).resolve("../docs/deploy/rbac.yaml").normalize();
    Role documented = java.util.Arrays.stream(Files.readString(manifest).split("\n---\n"))
        .filter(part -> part.contains("\nkind: Role\n")).map(part -> Serialization.unmarshal(part, Role.class))
        .findFirst().orElseThrow();
    Role printed = Serialization.unmarshal(LeaseAccess.roleYaml("orders", "orders-controller"), Role.class);
    for (Role role : List.of(documented, printed)) {
      List<ResourceRule> listed = new ArrayList<>();
      // As the server lists a Role's rules in a rules review.
      role.getRules().forEach(rule -> listed.add(new ResourceRuleBuilder().withApiGroups(rule.getApiGroups())
          .withResources(rule.getResources()).withResourceNames(rule.getResourceNames()).withVerbs(rule.getVerbs())
          .build()));
      LeaseRules rules = rules(listed.toArray(ResourceRule[]::new));
      assertThat(rules.grantRequired("orders-controller")).as("%s", role.getMetadata().getName()).isTrue();
      assertThat(rules.allowsOnLease("watch", "orders-controller")).isTrue();
      assertThat(rules.allowsEvents()).isTrue();
      assertThat(rules.grantRequired("another-lease")).as("scoped to the Lease by name").isFalse();
    }
  }
}
