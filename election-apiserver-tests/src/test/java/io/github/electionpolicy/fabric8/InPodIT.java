package io.github.electionpolicy.fabric8;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * In a pod, end to end: a child JVM is given what the kubelet gives a container — {@code KUBERNETES_SERVICE_HOST}
 * and {@code KUBERNETES_SERVICE_PORT}, the service account's real token, CA and namespace under
 * {@code /var/run/secrets/kubernetes.io/serviceaccount} (a private tmpfs over {@code /run}, in a mount namespace
 * of its own made with {@code unshare}, so the machine's own {@code /run} is untouched), {@code POD_NAME}, and no
 * kubeconfig — and runs {@link PodController}. The core must decide {@code IN_KUBERNETES_POD}, fabric8 must
 * configure itself in-cluster, the Lease namespace must come from the service-account file, and it must lead.
 */
class InPodIT {

  private final KubeCluster cluster = KubeCluster.fromSystemProperties();

  @TempDir
  Path home;

  @Test
  void aPodOfTheServiceAccountDecidesInPodConfiguresItselfInClusterAndLeads() throws Exception {
    String secrets = "/run/secrets/kubernetes.io/serviceaccount";
    String java = ProcessHandle.current().info().command().orElse("java");
    String script = String.join(" && ",
        "mount -t tmpfs tmpfs /run",
        "mkdir -p " + secrets,
        "cp " + cluster.podServiceAccountDir() + "/token " + cluster.podServiceAccountDir() + "/ca.crt "
            + cluster.podServiceAccountDir() + "/namespace " + secrets + "/",
        "exec \"$0\" -cp \"$1\" " + PodController.class.getName());
    ProcessBuilder builder = new ProcessBuilder("unshare", "--mount", "--propagation", "private", "--",
        "sh", "-c", script, java, System.getProperty("java.class.path"))
        .redirectErrorStream(true);
    Map<String, String> env = builder.environment();
    env.keySet().removeIf(name -> name.startsWith("KUBE") || name.equals("LEADER_ELECTION_ENABLED"));
    env.put("HOME", home.toString());          // no ~/.kube/config
    env.put("KUBERNETES_SERVICE_HOST", "127.0.0.1");
    env.put("KUBERNETES_SERVICE_PORT", String.valueOf(cluster.apiPort()));
    env.put("POD_NAME", "orders-controller-7d9f-abcde");
    Process process = builder.start();
    assertThat(process.waitFor(90, TimeUnit.SECONDS)).as("the pod's controller finished").isTrue();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    System.out.println(output);

    assertThat(process.exitValue()).as(output).isZero();
    assertThat(output)
        .contains("DECISION CONTEND [IN_KUBERNETES_POD]")
        .contains("CLIENT https://127.0.0.1:" + cluster.apiPort() + "/ namespace=" + KubeCluster.SA_NAMESPACE)
        .contains("LEADING term=")
        // POD_NAME plus a random suffix: two pods of one name (a StatefulSet's, recreated) never share an identity.
        .containsPattern("STATE LEADING namespace=" + KubeCluster.SA_NAMESPACE
            + " identity=orders-controller-7d9f-abcde-[a-z0-9]+ startupFailure=false")
        .contains("STOPPED SERVICE")
        .contains("CLOSED STOPPED");
    try (KubernetesClient admin = cluster.admin()) {
      var lease = admin.leases().inNamespace(KubeCluster.SA_NAMESPACE).withName("orders-controller").get();
      assertThat(lease.getSpec().getHolderIdentity()).as("released on close").isNullOrEmpty();
    }
  }

}
