package io.github.electionpolicy.fabric8;

import java.util.List;
import java.util.Objects;

/**
 * What one kind of runner asks RBAC for on {@code coordination.k8s.io} leases, as its RBAC preflight checks it: the
 * verbs without which it must not start ({@link #required()}), those it uses when it may and warns about when it may
 * not ({@link #advised()}), each asked either of the runner's own Lease by name or of every Lease of the namespace
 * (a list and watch by label has no name, so RBAC cannot scope it to one), and the Role that grants exactly them.
 *
 * <ul>
 *   <li>{@link #election()}, an {@link ElectionRunner}: {@code get}, {@code create}, {@code update} on its Lease
 *       ({@code create} without a name: the object does not exist yet), {@code watch} on it as advice. It deletes
 *       and lists nothing.
 *   <li>{@link #sharded(String)}, a {@link ShardedRunner} (its membership runner runs the preflight): {@code get},
 *       {@code create} and {@code update} on every Lease of the namespace (it writes its shards' Leases as well as
 *       its membership Lease), and {@code list} and {@code watch} on every Lease of the namespace (its one list and watch
 *       by label, {@link ShardLeaseSource}; without them it never sees a member or a shard's holder, so never owns a
 *       shard), both required; {@code delete} on its membership Lease as advice (a clean close deletes it; without it
 *       the released Lease stays behind). The Role grants these namespace-wide: the membership Leases' names are the
 *       pods'.
 * </ul>
 *
 * <p>Immutable and thread-safe.
 */
final class LeaseNeeds {

  /** One question: {@code verb} on the runner's Lease ({@code byName}) or on every Lease of the namespace. */
  record Ask(String verb, boolean byName) {
    Ask {
      Objects.requireNonNull(verb, "verb");
    }

    /** The name the review asks about: the Lease's, or none. */
    String name(String leaseName) {
      return byName ? leaseName : null;
    }
  }

  /** The verb RBAC cannot restrict by name: the object does not exist yet. */
  static final String UNNAMEABLE = "create";

  private static final LeaseNeeds ELECTION = new LeaseNeeds(null,
      List.of(new Ask("get", true), new Ask(UNNAMEABLE, false), new Ask("update", true)),
      List.of(new Ask("watch", true)));

  /** The sharded runner's verbs on every Lease of the namespace, in the order its Role lists them. */
  static final List<String> SHARDED_VERBS = List.of("get", "list", "watch", "create", "update", "delete");

  private final String shardedBase;
  private final List<Ask> required;
  private final List<Ask> advised;

  private LeaseNeeds(String shardedBase, List<Ask> required, List<Ask> advised) {
    this.shardedBase = shardedBase;
    this.required = List.copyOf(required);
    this.advised = List.copyOf(advised);
  }

  /** An {@link ElectionRunner}'s: {@link LeaseAccess#REQUIRED_VERBS} and {@link LeaseAccess#ADVISED_VERBS}. */
  static LeaseNeeds election() {
    return ELECTION;
  }

  /** A {@link ShardedRunner}'s whose base Lease name is {@code baseLeaseName} (it names the Role). */
  static LeaseNeeds sharded(String baseLeaseName) {
    Objects.requireNonNull(baseLeaseName, "baseLeaseName");
    return new LeaseNeeds(baseLeaseName,
        // get and update on every Lease, not by the membership Lease's name: the replica writes its shards' Leases
        // too, so a Role that names only the membership Lease must fail here, not with 403s on the shards later.
        List.of(new Ask("get", false), new Ask(UNNAMEABLE, false), new Ask("update", false), new Ask("list", false),
            new Ask("watch", false)),
        List.of(new Ask("delete", true)));
  }

  /** Whether these are a sharded runner's. */
  boolean sharded() {
    return shardedBase != null;
  }

  /** The questions whose denial stops the runner, in the order their answers are read. */
  List<Ask> required() {
    return required;
  }

  /** The questions whose denial only warns, asked once the verdict is given. */
  List<Ask> advised() {
    return advised;
  }

  /** The required verbs, in order. */
  List<String> requiredVerbs() {
    return required.stream().map(Ask::verb).toList();
  }

  /** The advised verbs, in order. */
  List<String> advisedVerbs() {
    return advised.stream().map(Ask::verb).toList();
  }

  /** What the runner needs, for the message of a denial: the clause after "it needs". */
  String needed() {
    if (!sharded()) {
      return String.join(", ", requiredVerbs()) + " (and " + String.join(", ", advisedVerbs())
          + ", to take over a released Lease at once)";
    }
    return String.join(", ", requiredVerbs()) + " on every Lease of the namespace (list and watch for its one list "
        + "and watch of the shards' and members' Leases; and delete, to remove its membership Lease when it closes)";
  }

  /** The least-privilege Role that grants these needs, as YAML, for the Lease (the membership Lease, if sharded). */
  String roleYaml(String namespace, String leaseName) {
    if (!sharded()) {
      return LeaseAccess.roleYaml(namespace, leaseName);
    }
    return shardedRoleYaml(namespace, shardedBase);
  }

  /**
   * The Role of a sharded runner whose base Lease is {@code baseLeaseName}: {@link #SHARDED_VERBS} on every Lease
   * of the namespace (the membership Leases are named after the pods, so no name can be given), and {@code create}
   * on events. The same rules as {@code docs/sharding-rbac.yaml}, which a test checks against what the runner sends.
   */
  static String shardedRoleYaml(String namespace, String baseLeaseName) {
    return "apiVersion: rbac.authorization.k8s.io/v1\n"
        + "kind: Role\n"
        + "metadata:\n"
        + "  name: " + baseLeaseName + "-sharded-leader-election\n"
        + "  namespace: " + namespace + "\n"
        + "rules:\n"
        + shardedLeaseRuleYaml()
        + LeaseAccess.EVENTS_RULE_YAML;
  }

  /** The one rule on leases of a sharded runner's Role, as it appears there. */
  static String shardedLeaseRuleYaml() {
    return "  - apiGroups: [\"coordination.k8s.io\"]\n"
        + "    resources: [\"leases\"]\n"
        + "    verbs: [\"" + String.join("\", \"", SHARDED_VERBS) + "\"]\n";
  }

  @Override
  public String toString() {
    return sharded() ? "LeaseNeeds[sharded " + shardedBase + "]" : "LeaseNeeds[election]";
  }
}
