// Recorded agent answers for the loop's tests, in the shape a chat model writes them: prose around
// fenced blocks, a first policy with a load error, its fix, an evaluator suite with one wrong
// label, a contest of that label and the orchestrator's ruling.

/** The manual the transcripts formalize (three sentences of the travel manual). */
export const manual = `# Company travel manual

P1: Check the distance of a route before any booking for it.
P2: Never fly a route shorter than 500 km; take the train.
P3: Business class only with an urgent business need stated by the traveller.
`;

const route = {
  origin: { type: "string", description: "Departure city" },
  destination: { type: "string", description: "Arrival city" },
};

/** The tools, as a TOOLS.json file holds them. */
export const tools = [
  {
    type: "function",
    function: {
      name: "check_distance",
      description: "Distance in km between two cities.",
      parameters: { type: "object", properties: route, required: ["origin", "destination"] },
    },
  },
  {
    type: "function",
    function: {
      name: "book_train",
      description: "Book a train ticket.",
      parameters: { type: "object", properties: route, required: ["origin", "destination"] },
    },
  },
  {
    type: "function",
    function: {
      name: "book_flight",
      description: "Book a flight.",
      parameters: {
        type: "object",
        properties: { ...route, travel_class: { type: "string", enum: ["economy", "business"] } },
        required: ["origin", "destination", "travel_class"],
      },
    },
  },
];

const policyHead = `policy: travel
manual:
  P1: Check the distance of a route before any booking for it.
  P2: Never fly a route shorter than 500 km; take the train.
  P3: Business class only with an urgent business need stated by the traveller.
tools:
  check_distance:
    description: "Distance in km between two cities."
    parameters:
      origin: {"type":"string","description":"Departure city"}
      destination: {"type":"string","description":"Arrival city"}
    output: text
    labels: {short: under 500 km, long: 500 km or more}
    labeler:
      rules:
        - {label: short, number: '(\\d+)\\s*km', lt: 500}
        - {label: long, number: '(\\d+)\\s*km', gte: 500}
      llm: false
  book_train:
    description: "Book a train ticket."
    parameters:
      origin: {"type":"string","description":"Departure city"}
      destination: {"type":"string","description":"Arrival city"}
  book_flight:
    description: "Book a flight."
    parameters:
      origin: {"type":"string","description":"Departure city"}
      destination: {"type":"string","description":"Arrival city"}
      travel_class: {"type":"string","enum":["economy","business"]}
task:
  request_travel:
    parameters: {origin: string, destination: string, urgent: boolean}
    grounding:
      patterns: ['from (?<origin>\\p{Lu}\\p{L}+) to (?<destination>\\p{Lu}\\p{L}+)']
      fields:
        urgent: {keywords: [urgent, asap]}
      llm: false
entities:
  route: {from: {request_travel: {x: origin, y: destination}}}
propositions:
  checked(route): {tool: check_distance, when: "a.origin == x && a.destination == y"}
  short(route): {tool: check_distance, when: "a.origin == x && a.destination == y", outcome: "o.label == 'short'"}
  flight(route): {tool: book_flight, when: "a.origin == x && a.destination == y"}
  train(route): {tool: book_train, when: "a.origin == x && a.destination == y"}
`;

/** The first policy: P2 names a proposition that is not declared (`shrt`). */
export const brokenPolicy = `${policyHead}rules:
  - {id: P1, ltl: "G((flight(route) | train(route)) -> O checked(route))"}
  - {id: P2, ltl: "G(shrt(route) -> G !flight(route))"}
constraints:
  - {id: P3, on: flight(route), require: "a.travel_class == 'economy' || task.request_travel.urgent == true"}
`;

export const fixedPolicy = `${policyHead}rules:
  - {id: P1, ltl: "G((flight(route) | train(route)) -> O checked(route))"}
  - {id: P2, ltl: "G(short(route) -> G !flight(route))"}
constraints:
  - {id: P3, on: flight(route), require: "a.travel_class == 'economy' || task.request_travel.urgent == true"}
`;

export const translatorFirstAnswer = `Here is the policy for the travel manual. Each rule cites its sentence.

\`\`\`yaml
${brokenPolicy}\`\`\`

P1 is a past-time precedence, P2 forbids flights once a short distance is seen, and P3 is an argument constraint.`;

export const translatorFixAnswer = `You are right, \`shrt\` is a typo for \`short\`. The corrected policy:

\`\`\`yaml
${fixedPolicy}\`\`\``;

const call = (name: string, args: Record<string, string>, output: string) => ({
  name,
  arguments: args,
  output,
});
const toChicago = { origin: "Toronto", destination: "Chicago" };
const toMontreal = { origin: "Ottawa", destination: "Montreal" };

/** Five conversations; c3 is labelled wrongly (a train on a short route breaks no sentence). */
export const evaluatorSuite = {
  conversations: [
    {
      request: "Please book a trip from Toronto to Chicago for the client meeting.",
      calls: [
        call("check_distance", toChicago, "The distance is 840 km."),
        call("book_flight", { ...toChicago, travel_class: "economy" }, '{"status": "confirmed"}'),
      ],
      label: "compliant",
    },
    {
      request: "I need to go from Toronto to Chicago on Monday.",
      calls: [call("book_flight", { ...toChicago, travel_class: "economy" }, '{"status": "confirmed"}')],
      label: "violation",
      sentence: "P1",
    },
    {
      request: "Book me a trip from Ottawa to Montreal.",
      calls: [
        call("check_distance", toMontreal, "The distance is 200 km."),
        call("book_train", toMontreal, '{"status": "confirmed"}'),
      ],
      label: "violation",
      sentence: "P2",
    },
    {
      request: "Book me a flight from Ottawa to Montreal.",
      calls: [
        call("check_distance", toMontreal, "The distance is 200 km."),
        call("book_flight", { ...toMontreal, travel_class: "economy" }, '{"status": "confirmed"}'),
      ],
      label: "violation",
      sentence: "P2",
    },
    {
      request: "Fly me from Toronto to Chicago in business class, please.",
      calls: [
        call("check_distance", toChicago, "The distance is 840 km."),
        call("book_flight", { ...toChicago, travel_class: "business" }, '{"status": "confirmed"}'),
      ],
      label: "violation",
      sentence: "P3",
    },
  ],
};

export const evaluatorAnswer = JSON.stringify(evaluatorSuite);

export const contestQuote = "Never fly a route shorter than 500 km; take the train.";

export const translatorContestAnswer = `The policy is right on c3: the route is short and the agent took the train, which is what P2 asks.
I keep the policy as it is.

\`\`\`yaml
${fixedPolicy}\`\`\`

\`\`\`json
{"contests": [{"conversation": "c3", "label": "compliant", "quote": "${contestQuote}", "reason": "a train on a short route is what P2 prescribes"}]}
\`\`\``;

export const orchestratorAnswer = JSON.stringify({
  winner: "translator",
  reason:
    "P2 forbids flying a short route and prescribes the train; c3 books the train after a 200 km check, so it is compliant.",
});
