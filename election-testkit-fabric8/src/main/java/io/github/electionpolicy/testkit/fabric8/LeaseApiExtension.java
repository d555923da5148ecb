package io.github.electionpolicy.testkit.fabric8;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A JUnit 5 extension that gives each test a fresh {@link LeaseApi}: started before the test, closed after
 * it (every client, watch and proxy it handed out, then the server). Register it with
 * {@code @RegisterExtension}; during a test it is the {@link LeaseApi} itself.
 *
 * <pre>{@code
 * class FailoverTest {
 *   @RegisterExtension
 *   final LeaseApiExtension api = LeaseApiExtension.create();
 *
 *   @Test
 *   void oneReplicaLeads() {
 *     ElectionRunner runner = ElectionRunner.builder()
 *         .client(api.replica("replica-1").client())
 *         .settings(LeaseSettings.builder().namespace(api.namespace())...build())
 *         ...
 *   }
 * }
 * }</pre>
 *
 * <p>By default the Lease API is embedded; {@code -Delection.it.kubeconfig=PATH} makes every test use a real
 * API server and a namespace of its own instead (see {@link ApiServerTarget}). Tests that need the embedded
 * server's faults call {@link #assumeEmbedded()} first.
 *
 * <p>Thread-safe during a test. Its methods throw {@link IllegalStateException} outside one (in a
 * {@code @BeforeAll} method, say); jqwik properties, which run no Jupiter extensions, use {@link
 * LeaseApi#builder()} instead.
 */
public final class LeaseApiExtension implements LeaseApi, BeforeEachCallback, AfterEachCallback {

  private final LeaseApi.Builder settings;
  private volatile LeaseApi current;

  private LeaseApiExtension(LeaseApi.Builder settings) {
    this.settings = settings;
  }

  /**
   * An extension with the defaults of {@link LeaseApi#builder()}.
   *
   * @return a new extension
   */
  public static LeaseApiExtension create() {
    return new LeaseApiExtension(LeaseApi.builder());
  }

  /**
   * An extension that starts each test's Lease API as configured; later changes to {@code settings} do not
   * affect it.
   *
   * <pre>{@code
   * @RegisterExtension
   * final LeaseApiExtension api = LeaseApiExtension.of(LeaseApi.builder().namespace("orders"));
   * }</pre>
   *
   * @param settings the configuration, copied
   * @return a new extension
   */
  public static LeaseApiExtension of(LeaseApi.Builder settings) {
    return new LeaseApiExtension(settings.copy());
  }

  @Override
  public void beforeEach(ExtensionContext context) {
    LeaseApi previous = current;
    if (previous != null) {
      previous.close();
    }
    current = settings.copy().start();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    LeaseApi running = current;
    current = null;
    if (running != null) {
      running.close();
    }
  }

  private LeaseApi api() {
    LeaseApi running = current;
    if (running == null) {
      throw new IllegalStateException("LeaseApiExtension has no Lease API outside a test: it starts one before "
          + "each test and closes it after; fix: register it with @RegisterExtension and use it inside @Test, "
          + "@BeforeEach or @AfterEach methods (or start one with LeaseApi.builder().start())");
    }
    return running;
  }

  @Override
  public boolean isEmbedded() {
    return api().isEmbedded();
  }

  @Override
  public void assumeEmbedded() {
    api().assumeEmbedded();
  }

  @Override
  public String namespace() {
    return api().namespace();
  }

  @Override
  public String url() {
    return api().url();
  }

  @Override
  public KubernetesClient client() {
    return api().client();
  }

  @Override
  public ReplicaLink replica(String name) {
    return api().replica(name);
  }

  @Override
  public List<LeaseWrite> leaseWrites() {
    return api().leaseWrites();
  }

  @Override
  public List<LeaseWrite> leaseWrites(String leaseName) {
    return api().leaseWrites(leaseName);
  }

  @Override
  public Optional<Lease> lease(String leaseName) {
    return api().lease(leaseName);
  }

  @Override
  public List<String> watchHolders(String leaseName) {
    return api().watchHolders(leaseName);
  }

  @Override
  public void overwriteHolder(String leaseName, String holder) {
    api().overwriteHolder(leaseName, holder);
  }

  @Override
  public void denyAccess(Set<String> verbs) {
    api().denyAccess(verbs);
  }

  @Override
  public void stopServer() {
    api().stopServer();
  }

  @Override
  public KubernetesMockServer mockServer() {
    return api().mockServer();
  }

  /** Closes the current test's Lease API early; the extension closes it after the test anyway. */
  @Override
  public void close() {
    LeaseApi running = current;
    if (running != null) {
      running.close();
    }
  }

  @Override
  public String toString() {
    LeaseApi running = current;
    return running == null ? "LeaseApiExtension[between tests]" : running.toString();
  }
}
