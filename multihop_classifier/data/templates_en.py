"""English rule templates and slot values for the seed-data generator (labels per the labelling guide)."""

from __future__ import annotations

SLOTS: dict[str, tuple[str, ...]] = {
    "person": tuple(
        (
            "Marie Curie|Albert Einstein|Ada Lovelace|Alan Turing|Grace Hopper|"
            "Nikola Tesla|Jane Austen|Charles Dickens|Virginia Woolf|George Orwell|"
            "Toni Morrison|Mark Twain|Steven Spielberg|Greta Gerwig|Shirley Temple|"
            "Meryl Streep|Tom Hanks|Frida Kahlo"
        ).split("|")
    ),
    "org": tuple(
        (
            "Acme Corporation|the Mozilla Foundation|Stanford University|"
            "the University of Oxford|Siemens|Nokia|the Red Cross|the World Bank|"
            "Harvard University|the BBC|Volvo|Philips|the Royal Society|MIT"
        ).split("|")
    ),
    "place": tuple(
        (
            "Paris Berlin Madrid Rome Vienna Prague Lisbon Dublin Oslo Helsinki "
            "Toronto Chicago Sydney Osaka Seoul Nairobi Lima Denver"
        ).split()
    ),
    "work": tuple(
        (
            "Pride and Prejudice|Nineteen Eighty-Four|Beloved|Great Expectations|"
            "Mrs Dalloway|Jurassic Park|Lady Bird|Kiss and Tell|The Post|Cast Away|"
            "Animal Farm|Emma"
        ).split("|")
    ),
    "policy": tuple(
        (
            "annual leave|sick leave|parental leave|travel reimbursement|"
            "overtime compensation|remote work|the purchase approval|"
            "onboarding training|the performance review|the probation period|"
            "the equipment loan|the expense report"
        ).split("|")
    ),
    "concept": tuple(
        (
            "vector search|BM25|multi-hop question answering|a knowledge graph|"
            "incremental backup|a canary release|load balancing|single sign-on|"
            "data masking|a circuit breaker|idempotency|eventual consistency"
        ).split("|")
    ),
    "system": tuple(
        ("the HR portal|the expense tool|the VPN|the wiki|the ticket system|Jira|Slack").split("|")
    ),
    "city_attr": tuple("population|area|average rainfall|elevation|number of metro lines".split("|")),
    "org_attr": tuple("founding year|headquarters|number of employees|current chair|motto".split("|")),
    "person_attr": tuple("birthplace|year of birth|alma mater|best-known work|nationality".split("|")),
}

# (label, kind, template); hard kinds as in the Chinese file.
TEMPLATES: tuple[tuple[str, str, str], ...] = (
    ("multi", "comparison", "Which city has the larger {city_attr}, {place} or {place2}?"),
    ("multi", "comparison", "Who was born first, {person} or {person2}?"),
    ("multi", "comparison", "What is the difference between {policy} and {policy2} for contractors?"),
    ("multi", "comparison", "Are {work} and {work2} by the same author?"),
    ("multi", "comparison", "Which was founded earlier, {org} or {org2}?"),
    ("multi", "comparison", "How does the {org_attr} of {org} compare with that of {org2}?"),
    ("multi", "short_comparison", "{place} or {place2}: which is bigger?"),
    ("multi", "short_comparison", "Older: {person} or {person2}?"),
    ("multi", "short_comparison", "Is {place} colder than {place2}?"),
    ("multi", "short_comparison", "{policy} vs {policy2}?"),
    ("multi", "short_comparison", "Both {person} and {person2} British?"),
    ("multi", "bridge", "Where was the author of {work} born?"),
    ("multi", "bridge", "What government position was held by the actress who starred in {work}?"),
    ("multi", "bridge", "Which university did the founder of {org} attend?"),
    ("multi", "bridge", "What is the {city_attr} of the city where {person} was born?"),
    ("multi", "bridge", "Who leads the team that approves {policy}?"),
    ("multi", "bridge", "In which city is the headquarters of the company that acquired {org}?"),
    ("multi", "bridge", "What is the {org_attr} of the organisation {person} worked for?"),
    ("multi", "sequential", "If my {policy} request is rejected, can I then apply for {policy2} instead?"),
    ("multi", "sequential", "After {policy} is approved in {system}, how long until {policy2} is paid out?"),
    (
        "multi",
        "sequential",
        "First I file {policy}, then who signs off, and how many days does {policy2} take after that?",
    ),
    ("multi", "sequential", "Because {policy} ran over, does that change my {policy2} balance?"),
    ("multi", "temporal", "Who was the mayor of {place} when {org} was founded?"),
    ("multi", "temporal", "Was {work} published before {person} died?"),
    ("multi", "temporal", "What was the {city_attr} of {place} in the year {person} was born?"),
    ("multi", "aggregation", "Which award did both {person} and {person2} receive?"),
    ("multi", "aggregation", "How many days of {policy} and {policy2} do I get in total?"),
    (
        "multi",
        "aggregation",
        "Which companies have offices in both {place} and {place2}, and when did each open?",
    ),
    ("single", "factoid", "What is the {city_attr} of {place}?"),
    ("single", "factoid", "What is the {org_attr} of {org}?"),
    ("single", "factoid", "What is the {person_attr} of {person}?"),
    ("single", "factoid", "Who wrote {work}?"),
    ("single", "factoid", "How many days of {policy} do employees get?"),
    ("single", "factoid", "When was {org} founded?"),
    ("single", "definition", "What is {concept}?"),
    ("single", "definition", "What does {concept} mean?"),
    ("single", "procedure", "How do I request {policy}?"),
    ("single", "procedure", "Which documents are needed for {policy}?"),
    ("single", "procedure", "How do I reset my password for {system}?"),
    (
        "single",
        "long_single",
        "I joined the team last month and I'm still getting used to everything here, so could you please tell me how many days of {policy} a full-time employee is entitled to each calendar year?",
    ),
    (
        "single",
        "long_single",
        "I'm preparing a short internal training session for new colleagues and need a clear, plain-language explanation: what exactly is {concept}, and what is it typically used for in practice?",
    ),
    (
        "single",
        "long_single",
        "For a city fact sheet I am putting together for our visitors, according to the most recent official statistics that have been published, what is the current {city_attr} of {place}?",
    ),
    (
        "single",
        "long_single",
        "Someone in the channel mentioned that the rules changed recently and I could not find the page, so can you walk me through the complete, step-by-step process for {policy} as it stands today?",
    ),
    ("single", "marker_single", "What did {person} do after leaving {org}?"),
    ("single", "marker_single", "Which city is {org} headquartered in?"),
    ("single", "marker_single", "What is the {policy} rule if I work more than 40 hours?"),
    ("single", "marker_single", "Who is the current head of {org}?"),
    ("single", "marker_single", "What happens if I forget to submit {policy} before the deadline?"),
    ("single", "two_entity_single", "Which role did {person} hold at {org}?"),
    ("single", "two_entity_single", "In which district of {place} is {org} located?"),
    ("single", "two_entity_single", "When did {work} premiere in {place}?"),
)
