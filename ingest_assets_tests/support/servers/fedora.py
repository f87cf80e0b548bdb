"""Fedora 6.1 (``fcrepo-webapp``, the newest on Maven Central) in Jetty's runner, as a hub runs it: a BASIC realm
named ``fcrepo`` (the war's security constraint) with one ``fedoraAdmin`` user, an OCFL home in the work folder,
and the external-content allow-list (``fcrepo.external.content.allowed``) given the prefixes a test passes.
"""

from __future__ import annotations

import secrets

import requests

from ingest_assets_tests.support.servers import FAST_START, Server, java_home, launch, maven, ports, wait_ready, workdir

VERSION = "6.1.0"
JETTY_RUNNER = "org.eclipse.jetty:jetty-runner:9.4.57.v20241219"
USER = "fedoraAdmin"
REALM = """<?xml version="1.0"?>
<!DOCTYPE Configure PUBLIC "-//Jetty//Configure//EN" "http://www.eclipse.org/jetty/configure_9_3.dtd">
<Configure id="Server" class="org.eclipse.jetty.server.Server">
  <Call name="addBean">
    <Arg>
      <New class="org.eclipse.jetty.security.HashLoginService">
        <Set name="name">fcrepo</Set>
        <Set name="config">{realm}</Set>
      </New>
    </Arg>
  </Call>
</Configure>
"""


def start_fedora(allowed_external: tuple[str, ...] = ()) -> Server:
    """Fedora at ``<url>`` = ``http://127.0.0.1:<port>/fcrepo/rest``; ``facts``: ``user``, ``password``."""
    war = maven(f"org.fcrepo:fcrepo-webapp:{VERSION}:war")
    runner = maven(JETTY_RUNNER)
    work = workdir("fedora")
    password = secrets.token_hex(12)
    (work / "realm.properties").write_text(f"{USER}: {password},fedoraAdmin\n")
    (work / "realm.xml").write_text(REALM.format(realm=work / "realm.properties"))
    allowed = work / "allowed-external-content.txt"
    allowed.write_text("".join(f"{prefix}\n" for prefix in allowed_external))
    port, jms, stomp = ports(3)
    java = str(java_home() / "bin" / "java")
    command = [
        java, "-Xms128m", "-Xmx384m", *FAST_START, f"-Dfcrepo.home={work / 'home'}",
        f"-Dfcrepo.external.content.allowed={allowed}",
        # no JMS messages (nothing here listens), and the broker's ports free ones: its defaults (61616, 61613 on
        # every interface) made a second Fedora on the machine fail to start
        "-Dfcrepo.jms.enabled=false", f"-Dfcrepo.dynamic.jms.port={jms}", f"-Dfcrepo.dynamic.stomp.port={stomp}",
        "-jar", str(runner), "--host", "127.0.0.1",
        "--port", str(port), "--config", str(work / "realm.xml"), "--path", "/fcrepo", str(war),
    ]
    pid, log = launch("fedora", command, home=work)
    url = f"http://127.0.0.1:{port}/fcrepo/rest"
    server = Server("fedora", url, pid, work, log, {"user": USER, "password": password, "version": VERSION,
                                                          "allowed": str(allowed)})

    def ready() -> bool:
        return requests.head(url, auth=(USER, password), timeout=5).status_code == 200

    return wait_ready(server, ready, timeout=180)
