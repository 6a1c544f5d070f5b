import { fileURLToPath } from "node:url";
import { loadPolicy, type Policy } from "../../src/policy/index.js";
import { Conversation } from "./conversation.js";

/** policies/tau2-retail/policy.yaml. */
export const retailPolicy = (): Policy =>
  loadPolicy(fileURLToPath(new URL("../../../policies/tau2-retail/policy.yaml", import.meta.url)));

/**
 * tau2-retail task 4 at its first blocked call: the items of orders #W6247578 and #W4776164 to
 * change, the user found, #W6247578 looked up (pending). The model then wrote an item id as the
 * order id of `modify_pending_order_items`.
 */
export const twoItemChanges = (): Conversation =>
  new Conversation(
    [
      { name: "request_item_change", arguments: { order_id: "#W6247578" } },
      { name: "request_item_change", arguments: { order_id: "#W4776164" } },
    ],
    "Change items of orders #W6247578 and #W4776164.",
  )
    .call("find_user_id_by_email", { email: "a@example.com" }, { json: "user_1" })
    .call(
      "get_order_details",
      { order_id: "#W6247578" },
      {
        json: {
          order_id: "#W6247578",
          status: "pending",
          items: [{ name: "T-Shirt", product_id: "9523456873", item_id: "3799046073" }],
          payment_history: [{ payment_method_id: "credit_card_1" }],
        },
      },
    );

/**
 * `twoItemChanges` after the T-shirt's product lookup: variants 9647292434 (available),
 * 8349118980 (not available) and the order's own item 3799046073 (available).
 */
export const tshirtLookedUp = (): Conversation =>
  twoItemChanges().call(
    "get_product_details",
    { product_id: "9523456873" },
    {
      json: {
        name: "T-Shirt",
        product_id: "9523456873",
        variants: {
          "9647292434": { item_id: "9647292434", options: { color: "purple" }, available: true },
          "8349118980": { item_id: "8349118980", options: { color: "blue" }, available: false },
          "3799046073": { item_id: "3799046073", options: { color: "black" }, available: true },
        },
      },
    },
  );
