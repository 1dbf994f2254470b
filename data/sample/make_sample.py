"""Build data/sample/futurex_sample.jsonl, the embedded sample corpus, in FutureX-Past's raw shape.

Every question below is a real event whose outcome is public; `source_url` points at a page that
states it and `resolution_note` says it in one sentence for a human checker. Events are phrased
as they stood before resolution. `end_time` is the day the outcome became known (local date of
the event). Options are listed in a fixed canonical order: numeric ranges ascending, policy moves
from loosest to tightest, names and countries alphabetically.

Run from the repository root:  PYTHONPATH=. python data/sample/make_sample.py
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from oracleproto.letters import split_answer
from oracleproto.corpus.sources.futurex import ground_truth_literal, render_prompt

OUT_PATH = Path(__file__).with_name("futurex_sample.jsonl")
YES_NO = ["Yes", "No"]
FED = "https://www.federalreserve.gov/newsevents/pressreleases/monetary{}a.htm"
WIKI = "https://en.wikipedia.org/wiki/{}"
ECB_RATES = "https://www.ecb.europa.eu/stats/policy_and_exchange_rates/key_ecb_interest_rates/html/index.en.html"
RATE_MOVES = [
    "Cut of 0.50 percentage points or more",
    "Cut of 0.25 percentage points",
    "No change",
    "Increase",
]


def q(slug, event, question_type, options, answer, end_time, source_url, resolution_note):
    """One curated question; `slug` is a readable handle the archive builder keys its texts by."""
    return dict(
        slug=slug,
        event=event,
        question_type=question_type,
        options=list(options),
        answer=answer,
        end_time=end_time,
        source_url=source_url,
        resolution_note=resolution_note,
    )


QUESTIONS = [
    # ----------------------------------------------------------------------------- 2023
    q("sb-lvii", "Which team will win Super Bowl LVII on 12 February 2023?", "binary_named",
      ["Kansas City Chiefs", "Philadelphia Eagles"], "A", "2023-02-12",
      WIKI.format("Super_Bowl_LVII"),
      "The Kansas City Chiefs beat the Philadelphia Eagles 38-35 in Super Bowl LVII on 12 February 2023."),
    q("oscars-bp-2023", "Which film will win Best Picture at the 95th Academy Awards on 12 March 2023?",
      "multiple_choice",
      ["All Quiet on the Western Front", "Avatar: The Way of Water", "Elvis",
       "Everything Everywhere All at Once", "Tár", "The Banshees of Inisherin", "The Fabelmans",
       "Top Gun: Maverick", "Triangle of Sadness", "Women Talking"], "D", "2023-03-12",
      WIKI.format("95th_Academy_Awards"),
      "Everything Everywhere All at Once took Best Picture at the 95th Academy Awards on 12 March 2023."),
    q("gpt4", "Will OpenAI publicly release GPT-4 by 31 March 2023?", "yes_no", YES_NO, "A", "2023-03-14",
      WIKI.format("GPT-4"),
      "OpenAI released GPT-4 to ChatGPT Plus subscribers and API users on 14 March 2023."),
    q("starship-ift1",
      "Will the Super Heavy booster and the Starship upper stage separate during SpaceX's first integrated "
      "Starship flight test on 20 April 2023?", "yes_no", YES_NO, "B", "2023-04-20",
      WIKI.format("Starship_flight_test_1"),
      "On 20 April 2023 the stack failed to separate, tumbled and was destroyed by its flight termination system."),
    q("eurovision-2023", "Which country will win the Eurovision Song Contest 2023 grand final in Liverpool?",
      "multiple_choice", ["Finland", "Israel", "Italy", "Norway", "Sweden", "Ukraine"], "E", "2023-05-13",
      WIKI.format("Eurovision_Song_Contest_2023"),
      "Sweden (Loreen, 'Tattoo') won the Eurovision Song Contest 2023 on 13 May 2023, ahead of Finland."),
    q("turkey-runoff", "Who will win the Turkish presidential runoff on 28 May 2023?", "binary_named",
      ["Kemal Kılıçdaroğlu", "Recep Tayyip Erdoğan"], "B", "2023-05-28",
      WIKI.format("2023_Turkish_presidential_election"),
      "Recep Tayyip Erdoğan won the runoff of 28 May 2023 with about 52% of the vote."),
    q("debt-limit",
      "Will the President of the United States sign legislation suspending or raising the federal debt limit "
      "by 5 June 2023?", "yes_no", YES_NO, "A", "2023-06-03",
      WIKI.format("Fiscal_Responsibility_Act_of_2023"),
      "President Biden signed the Fiscal Responsibility Act of 2023, which suspends the debt limit, on 3 June 2023."),
    q("nba-2023", "Which team will win the 2023 NBA Finals?", "binary_named",
      ["Denver Nuggets", "Miami Heat"], "A", "2023-06-12",
      WIKI.format("2023_NBA_Finals"),
      "The Denver Nuggets beat the Miami Heat 4-1, clinching the title in Game 5 on 12 June 2023."),
    q("spain-2023",
      "Which party will win the most seats in the Congress of Deputies at the Spanish general election "
      "of 23 July 2023?", "multiple_choice", ["PP", "PSOE", "Sumar", "Vox"], "A", "2023-07-23",
      WIKI.format("2023_Spanish_general_election"),
      "The PP won 137 seats on 23 July 2023, the most of any party, ahead of the PSOE with 121."),
    q("barbie-opening",
      "What will Barbie's domestic (US and Canada) opening-weekend gross for 21-23 July 2023 be, as first "
      "reported?", "multiple_choice",
      ["Under $100 million", "$100 million to under $125 million", "$125 million to under $150 million",
       "$150 million or more"], "D", "2023-07-23",
      WIKI.format("Barbie_(film)"),
      "Barbie opened to an estimated $155 million domestically on 21-23 July 2023 (about $162 million in actuals)."),
    q("fed-2023-07",
      "Will the FOMC raise the target range for the federal funds rate at its 25-26 July 2023 meeting?",
      "yes_no", YES_NO, "A", "2023-07-26", FED.format("20230726"),
      "On 26 July 2023 the FOMC raised the target range by 0.25 points to 5.25-5.50%."),
    q("wwc-sf-2023", "Which teams will reach the semi-finals of the 2023 FIFA Women's World Cup?",
      "multiple_choice", ["Australia", "England", "France", "Japan", "Netherlands", "Spain", "Sweden"],
      "A, B, F, G", "2023-08-12",
      WIKI.format("2023_FIFA_Women%27s_World_Cup_knockout_stage"),
      "Spain, Sweden, Australia and England won their quarter-finals on 11-12 August 2023."),
    q("chandrayaan-3", "Will India's Chandrayaan-3 lander make a soft landing on the Moon by 31 August 2023?",
      "yes_no", YES_NO, "A", "2023-08-23", WIKI.format("Chandrayaan-3"),
      "The Vikram lander of Chandrayaan-3 soft-landed near the lunar south pole on 23 August 2023."),
    q("boe-2023-09", "What will the Bank of England decide for Bank Rate on 21 September 2023?",
      "multiple_choice",
      ["Cut", "No change", "Increase of 0.25 percentage points", "Increase of 0.50 percentage points or more"],
      "B", "2023-09-21", "https://www.bankofengland.co.uk/boeapps/database/Bank-Rate.asp",
      "On 21 September 2023 the MPC voted 5-4 to hold Bank Rate at 5.25%."),
    q("nobel-2023", "Which of these people will be awarded a 2023 Nobel Prize (in any category)?",
      "multiple_choice",
      ["Can Xue", "Claudia Goldin", "Haruki Murakami", "Jon Fosse", "Katalin Karikó", "Narges Mohammadi",
       "Salman Rushdie"], "B, D, E, F", "2023-10-09",
      "https://www.nobelprize.org/all-nobel-prizes-2023/",
      "Karikó (medicine, 2 Oct), Fosse (literature, 5 Oct), Mohammadi (peace, 6 Oct) and Goldin (economics, "
      "9 Oct 2023) were laureates."),
    q("rwc-sf-2023", "Which teams will reach the semi-finals of the 2023 Rugby World Cup?", "multiple_choice",
      ["Argentina", "England", "France", "Ireland", "New Zealand", "South Africa", "Wales"],
      "A, B, E, F", "2023-10-15",
      WIKI.format("2023_Rugby_World_Cup_knockout_stage"),
      "Argentina, New Zealand, England and South Africa won their quarter-finals on 14-15 October 2023."),
    q("rwc-final-2023", "Which team will win the 2023 Rugby World Cup final in Saint-Denis on 28 October 2023?",
      "binary_named", ["New Zealand", "South Africa"], "B", "2023-10-28",
      WIKI.format("2023_Rugby_World_Cup_final"),
      "South Africa beat New Zealand 12-11 in the final on 28 October 2023."),
    q("ballon-2023", "Who will win the 2023 men's Ballon d'Or?", "multiple_choice",
      ["Erling Haaland", "Kevin De Bruyne", "Kylian Mbappé", "Lionel Messi", "Rodri"], "D", "2023-10-30",
      WIKI.format("2023_Ballon_d%27Or"),
      "Lionel Messi received the 2023 Ballon d'Or on 30 October 2023, ahead of Erling Haaland."),
    q("cwc-final-2023",
      "Which team will win the 2023 ICC Men's Cricket World Cup final in Ahmedabad on 19 November 2023?",
      "binary_named", ["Australia", "India"], "A", "2023-11-19",
      WIKI.format("2023_Cricket_World_Cup_final"),
      "Australia beat India by six wickets in the final on 19 November 2023."),
    q("argentina-runoff", "Who will win Argentina's presidential runoff on 19 November 2023?", "binary_named",
      ["Javier Milei", "Sergio Massa"], "A", "2023-11-19",
      WIKI.format("2023_Argentine_general_election"),
      "Javier Milei won the runoff of 19 November 2023 with about 56% of the vote; Massa conceded that night."),
    q("dutch-2023", "Which party will win the most seats in the Dutch general election of 22 November 2023?",
      "multiple_choice", ["CDA", "GroenLinks-PvdA", "NSC", "PVV", "VVD"], "D", "2023-11-22",
      WIKI.format("2023_Dutch_general_election"),
      "The PVV won 37 of 150 seats, the most of any party; exit polls showed it first on 22 November 2023."),
    # ----------------------------------------------------------------------------- 2024
    q("sec-btc-etf", "Will the US SEC approve the listing of a spot bitcoin exchange-traded product by "
      "31 January 2024?", "yes_no", YES_NO, "A", "2024-01-10",
      "https://www.sec.gov/news/statement/gensler-statement-spot-bitcoin-011023",
      "On 10 January 2024 the SEC approved the listing of eleven spot bitcoin exchange-traded products."),
    q("taiwan-2024", "Who will win Taiwan's presidential election on 13 January 2024?", "multiple_choice",
      ["Hou Yu-ih", "Ko Wen-je", "Lai Ching-te"], "C", "2024-01-13",
      WIKI.format("2024_Taiwanese_presidential_election"),
      "Lai Ching-te of the DPP won the presidential election of 13 January 2024 with about 40% of the vote."),
    q("grammy-aoty-2024",
      "Which album will win Album of the Year at the 66th Annual Grammy Awards on 4 February 2024?",
      "multiple_choice",
      ["boygenius - The Record", "Janelle Monáe - The Age of Pleasure", "Jon Batiste - World Music Radio",
       "Lana Del Rey - Did You Know That There's a Tunnel Under Ocean Blvd", "Miley Cyrus - Endless Summer Vacation",
       "Olivia Rodrigo - Guts", "SZA - SOS", "Taylor Swift - Midnights"], "H", "2024-02-04",
      WIKI.format("66th_Annual_Grammy_Awards"),
      "Taylor Swift's Midnights won Album of the Year on 4 February 2024."),
    q("oscars-bp-2024", "Which film will win Best Picture at the 96th Academy Awards on 10 March 2024?",
      "multiple_choice",
      ["American Fiction", "Anatomy of a Fall", "Barbie", "Killers of the Flower Moon", "Maestro",
       "Oppenheimer", "Past Lives", "Poor Things", "The Holdovers", "The Zone of Interest"], "F", "2024-03-10",
      WIKI.format("96th_Academy_Awards"),
      "Oppenheimer won Best Picture at the 96th Academy Awards on 10 March 2024."),
    q("oscars-3plus-2024", "Which films will win at least three Academy Awards at the 96th Academy Awards "
      "on 10 March 2024?", "multiple_choice",
      ["Barbie", "Killers of the Flower Moon", "Oppenheimer", "Poor Things", "The Zone of Interest"],
      "C, D", "2024-03-10", WIKI.format("96th_Academy_Awards"),
      "On 10 March 2024 Oppenheimer won 7 Oscars, Poor Things 4, The Zone of Interest 2, Barbie 1 and "
      "Killers of the Flower Moon none."),
    q("boj-nirp", "Will the Bank of Japan end its negative interest rate policy at its 18-19 March 2024 "
      "monetary policy meeting?", "yes_no", YES_NO, "A", "2024-03-19",
      WIKI.format("Bank_of_Japan"),
      "On 19 March 2024 the BoJ raised its short-term policy rate from -0.1% to a range of 0-0.1%."),
    q("eurovision-2024", "Which country will win the Eurovision Song Contest 2024 grand final in Malmö?",
      "multiple_choice", ["Croatia", "France", "Israel", "Italy", "Switzerland", "Ukraine"], "E", "2024-05-11",
      WIKI.format("Eurovision_Song_Contest_2024"),
      "Switzerland (Nemo, 'The Code') won the Eurovision Song Contest 2024 on 11 May 2024, ahead of Croatia."),
    q("mexico-2024", "Who will win Mexico's presidential election on 2 June 2024?", "multiple_choice",
      ["Claudia Sheinbaum", "Jorge Álvarez Máynez", "Xóchitl Gálvez"], "A", "2024-06-03",
      WIKI.format("2024_Mexican_general_election"),
      "The INE quick count, announced around midnight after the 2 June 2024 vote, showed Claudia Sheinbaum "
      "winning with about 59%."),
    q("bjp-majority", "Will the BJP win an outright majority (at least 272 of 543 seats) on its own in the "
      "2024 Indian Lok Sabha election?", "yes_no", YES_NO, "B", "2024-06-04",
      WIKI.format("2024_Indian_general_election"),
      "Results counted on 4 June 2024 gave the BJP 240 seats, short of a majority on its own."),
    q("ecb-2024-06", "Will the ECB Governing Council lower its three key interest rates at its 6 June 2024 "
      "meeting?", "yes_no", YES_NO, "A", "2024-06-06", ECB_RATES,
      "On 6 June 2024 the ECB cut its key rates by 0.25 points, taking the deposit facility rate to 3.75%."),
    q("inside-out-2",
      "What will Inside Out 2's domestic (US and Canada) opening-weekend gross for 14-16 June 2024 be, as first "
      "reported?", "multiple_choice",
      ["Under $90 million", "$90 million to under $120 million", "$120 million to under $150 million",
       "$150 million or more"], "D", "2024-06-16", WIKI.format("Inside_Out_2"),
      "Inside Out 2 opened to an estimated $155 million domestically on 14-16 June 2024."),
    q("uk-cpi-may-2024", "Will UK CPI annual inflation for May 2024, as first published by the ONS, be 2.0% "
      "or lower?", "yes_no", YES_NO, "A", "2024-06-19",
      "https://www.ons.gov.uk/economy/inflationandpriceindices/bulletins/consumerpriceinflation/may2024",
      "The ONS reported on 19 June 2024 that CPI inflation was 2.0% in the 12 months to May 2024."),
    q("uk-2024", "Which party will win the most seats in the UK general election on 4 July 2024?",
      "multiple_choice", ["Conservative", "Labour", "Liberal Democrats", "Reform UK", "Scottish National Party"],
      "B", "2024-07-05", WIKI.format("2024_United_Kingdom_general_election"),
      "Labour won 411 seats in the election of 4 July 2024; the majority was confirmed early on 5 July."),
    q("uk-10seats-2024", "Which parties will win at least 10 seats in the House of Commons at the UK general "
      "election on 4 July 2024?", "multiple_choice",
      ["Conservative", "Green", "Labour", "Liberal Democrats", "Reform UK", "Scottish National Party"],
      "A, C, D", "2024-07-05", WIKI.format("2024_United_Kingdom_general_election"),
      "Final results on 5 July 2024: Labour 411, Conservative 121, Liberal Democrats 72, SNP 9, Reform UK 5, "
      "Green 4."),
    q("euro-sf-2024", "Which teams will reach the semi-finals of UEFA Euro 2024?", "multiple_choice",
      ["England", "France", "Germany", "Netherlands", "Portugal", "Spain", "Switzerland", "Turkey"],
      "A, B, D, F", "2024-07-06", WIKI.format("UEFA_Euro_2024_knockout_stage"),
      "Spain, France, the Netherlands and England won their quarter-finals on 5-6 July 2024."),
    q("france-2024", "Which alliance will win the most seats in the second round of the French legislative "
      "election on 7 July 2024?", "multiple_choice",
      ["Ensemble", "National Rally and allies", "New Popular Front", "The Republicans"], "C", "2024-07-07",
      WIKI.format("2024_French_legislative_election"),
      "Projections on the evening of 7 July 2024 put the New Popular Front first in seats, ahead of Ensemble."),
    q("us-cpi-jun-2024", "What will the 12-month change in the US CPI-U (all items) be for June 2024, as first "
      "published by the BLS?", "multiple_choice", ["2.9% or lower", "3.0%", "3.1%", "3.2%", "3.3% or higher"],
      "B", "2024-07-11", "https://www.bls.gov/news.release/archives/cpi_07112024.htm",
      "The BLS reported on 11 July 2024 that the all-items CPI rose 3.0% over the 12 months to June 2024."),
    q("euro-final-2024", "Which team will win the UEFA Euro 2024 final in Berlin on 14 July 2024?",
      "binary_named", ["England", "Spain"], "B", "2024-07-14", WIKI.format("UEFA_Euro_2024_final"),
      "Spain beat England 2-1 in the final on 14 July 2024."),
    q("us-unemp-jul-2024", "What will the US unemployment rate for July 2024 be in the BLS Employment "
      "Situation report?", "multiple_choice", ["4.0% or lower", "4.1%", "4.2%", "4.3%", "4.4% or higher"],
      "D", "2024-08-02", "https://www.bls.gov/news.release/archives/empsit_08022024.htm",
      "The BLS reported on 2 August 2024 that the unemployment rate rose to 4.3% in July 2024."),
    q("paris-20gold", "Which national Olympic committees will win at least 20 gold medals at the Paris 2024 "
      "Summer Olympics?", "multiple_choice",
      ["Australia", "China", "France", "Great Britain", "Japan", "United States"], "B, E, F", "2024-08-11",
      WIKI.format("2024_Summer_Olympics_medal_table"),
      "When the Games closed on 11 August 2024 the United States and China had 40 golds each, Japan 20, "
      "Australia 18, France 16 and Great Britain 14."),
    q("starliner-crew", "Will NASA decide to bring Starliner crew members Butch Wilmore and Suni Williams back "
      "to Earth aboard the Starliner spacecraft?", "yes_no", YES_NO, "B", "2024-08-24",
      WIKI.format("Boeing_Crew_Flight_Test"),
      "On 24 August 2024 NASA decided Starliner would return uncrewed and the two astronauts would fly home "
      "with SpaceX Crew-9."),
    q("fed-2024-09", "What will the FOMC decide for the federal funds target range at its 17-18 September "
      "2024 meeting?", "multiple_choice", RATE_MOVES, "A", "2024-09-18", FED.format("20240918"),
      "On 18 September 2024 the FOMC cut the target range by 0.50 points to 4.75-5.00%."),
    q("starship-flight5", "Will SpaceX catch the Super Heavy booster with the launch tower's arms during "
      "Starship Flight 5?", "yes_no", YES_NO, "A", "2024-10-13", WIKI.format("Starship_flight_test_5"),
      "On 13 October 2024 the Flight 5 Super Heavy booster was caught by the tower's chopstick arms at Starbase."),
    q("nobel-2024", "Which of these people will be awarded a 2024 Nobel Prize (in any category)?",
      "multiple_choice",
      ["Daron Acemoglu", "Demis Hassabis", "Geoffrey Hinton", "Gerald Murnane", "Han Kang", "Sam Altman",
       "Yann LeCun"], "A, B, C, E", "2024-10-14",
      "https://www.nobelprize.org/all-nobel-prizes-2024/",
      "Hinton (physics, 8 Oct), Hassabis (chemistry, 9 Oct), Han Kang (literature, 10 Oct) and Acemoglu "
      "(economics, 14 Oct 2024) were laureates."),
    q("ballon-2024", "Who will win the 2024 men's Ballon d'Or?", "multiple_choice",
      ["Erling Haaland", "Jude Bellingham", "Kylian Mbappé", "Rodri", "Vinícius Júnior"], "D", "2024-10-28",
      WIKI.format("2024_Ballon_d%27Or"),
      "Rodri received the 2024 Ballon d'Or on 28 October 2024, ahead of Vinícius Júnior."),
    q("us-senate-2024", "Will the Republican Party win a majority of seats in the US Senate in the November "
      "2024 elections?", "yes_no", YES_NO, "A", "2024-11-06",
      WIKI.format("2024_United_States_Senate_elections"),
      "Republicans were projected to win Senate control on 6 November 2024 and finished with 53 seats."),
    q("us-pres-2024", "Who will win the 2024 United States presidential election?", "binary_named",
      ["Donald Trump", "Kamala Harris"], "A", "2024-11-06",
      WIKI.format("2024_United_States_presidential_election"),
      "Donald Trump was projected the winner on the morning of 6 November 2024 (Eastern Time)."),
    q("btc-100k", "Will the price of bitcoin exceed US$100,000 before the end of 2024?", "yes_no", YES_NO, "A",
      "2024-12-05", WIKI.format("History_of_bitcoin"),
      "Bitcoin traded above $100,000 for the first time on 5 December 2024 (UTC)."),
    q("f1-top3-2024", "Which drivers will finish in the top three of the 2024 Formula One World Drivers' "
      "Championship?", "multiple_choice",
      ["Carlos Sainz", "Charles Leclerc", "Lando Norris", "Max Verstappen", "Oscar Piastri"], "B, C, D",
      "2024-12-08", WIKI.format("2024_Formula_One_World_Championship"),
      "After the Abu Dhabi finale on 8 December 2024 the standings read Verstappen, Norris, Leclerc, Piastri, Sainz."),
    q("wcc-2024", "Who will win the 2024 World Chess Championship match in Singapore?", "binary_named",
      ["Ding Liren", "Gukesh Dommaraju"], "B", "2024-12-12", WIKI.format("World_Chess_Championship_2024"),
      "Gukesh Dommaraju won game 14 on 12 December 2024 to beat Ding Liren 7.5-6.5."),
    # ----------------------------------------------------------------------------- 2025
    q("fed-2025-01", "Will the FOMC lower the target range for the federal funds rate at its 28-29 January "
      "2025 meeting?", "yes_no", YES_NO, "B", "2025-01-29", FED.format("20250129"),
      "On 29 January 2025 the FOMC held the target range at 4.25-4.50%."),
    q("grammy-aoty-2025",
      "Which album will win Album of the Year at the 67th Annual Grammy Awards on 2 February 2025?",
      "multiple_choice",
      ["André 3000 - New Blue Sun", "Beyoncé - Cowboy Carter", "Billie Eilish - Hit Me Hard and Soft",
       "Chappell Roan - The Rise and Fall of a Midwest Princess", "Charli XCX - Brat",
       "Jacob Collier - Djesse Vol. 4", "Sabrina Carpenter - Short n' Sweet",
       "Taylor Swift - The Tortured Poets Department"], "B", "2025-02-02",
      WIKI.format("67th_Annual_Grammy_Awards"),
      "Beyoncé's Cowboy Carter won Album of the Year on 2 February 2025."),
    q("sb-lix", "Which team will win Super Bowl LIX on 9 February 2025?", "binary_named",
      ["Kansas City Chiefs", "Philadelphia Eagles"], "B", "2025-02-09", WIKI.format("Super_Bowl_LIX"),
      "The Philadelphia Eagles beat the Kansas City Chiefs 40-22 in Super Bowl LIX on 9 February 2025."),
    q("rba-2025-02", "Will the Reserve Bank of Australia lower the cash rate target at its February 2025 "
      "meeting (decision on 18 February)?", "yes_no", YES_NO, "A", "2025-02-18",
      "https://www.rba.gov.au/statistics/cash-rate/",
      "On 18 February 2025 the RBA cut the cash rate target by 0.25 points to 4.10%."),
    q("german-5pct-2025", "Which parties will receive at least 5% of the party-list (second) vote in the German "
      "federal election on 23 February 2025?", "multiple_choice",
      ["AfD", "BSW", "CDU/CSU", "Die Linke", "FDP", "Greens", "SPD"], "A, C, D, F, G", "2025-02-24",
      WIKI.format("2025_German_federal_election"),
      "The preliminary result of 24 February 2025: CDU/CSU 28.5%, AfD 20.8%, SPD 16.4%, Greens 11.6%, "
      "Die Linke 8.8%, BSW 4.97%, FDP 4.3%."),
    q("oscars-2plus-2025", "Which films will win at least two Academy Awards at the 97th Academy Awards on "
      "2 March 2025?", "multiple_choice",
      ["A Complete Unknown", "Anora", "Conclave", "Dune: Part Two", "Emilia Pérez", "The Brutalist", "Wicked"],
      "B, D, E, F, G", "2025-03-02", WIKI.format("97th_Academy_Awards"),
      "On 2 March 2025 Anora won 5 Oscars, The Brutalist 3, Dune: Part Two, Emilia Pérez and Wicked 2 each, "
      "Conclave 1 and A Complete Unknown none."),
    q("switch2-price", "What will be the US launch price of the standalone Nintendo Switch 2 console, as "
      "announced by Nintendo?", "multiple_choice",
      ["Under $400", "$400 to $449.99", "$450 to $499.99", "$500 or more"], "B", "2025-04-02",
      WIKI.format("Nintendo_Switch_2"),
      "Nintendo announced on 2 April 2025 a US price of $449.99 for the standalone console."),
    q("minecraft-opening",
      "What will A Minecraft Movie's domestic (US and Canada) opening-weekend gross for 4-6 April 2025 be, as "
      "first reported?", "multiple_choice",
      ["Under $80 million", "$80 million to under $110 million", "$110 million to under $140 million",
       "$140 million or more"], "D", "2025-04-06", WIKI.format("A_Minecraft_Movie"),
      "A Minecraft Movie opened to an estimated $157 million domestically on 4-6 April 2025."),
    q("us-gdp-q1-2025", "Will the BEA's advance estimate of US real GDP growth for the first quarter of 2025 "
      "be negative (annualized)?", "yes_no", YES_NO, "A", "2025-04-30",
      "https://www.bea.gov/news/2025/gross-domestic-product-1st-quarter-2025-advance-estimate",
      "The BEA's advance estimate of 30 April 2025 put Q1 2025 real GDP growth at -0.3% annualized."),
    q("conclave-second-day", "Will the 2025 papal conclave elect a new pope no later than its second day of "
      "voting (8 May 2025)?", "yes_no", YES_NO, "A", "2025-05-08", WIKI.format("2025_papal_conclave"),
      "The conclave elected a pope on its second day, 8 May 2025, on the fourth ballot."),
    q("pope-2025", "Who will be elected pope by the 2025 papal conclave?", "multiple_choice",
      ["Luis Antonio Tagle", "Matteo Zuppi", "Péter Erdő", "Pietro Parolin", "Robert Francis Prevost"], "E",
      "2025-05-08", WIKI.format("2025_papal_conclave"),
      "Cardinal Robert Francis Prevost was elected on 8 May 2025 and took the name Leo XIV."),
    q("eurovision-2025", "Which country will win the Eurovision Song Contest 2025 grand final in Basel?",
      "multiple_choice", ["Austria", "Estonia", "France", "Israel", "Netherlands", "Sweden"], "A", "2025-05-17",
      WIKI.format("Eurovision_Song_Contest_2025"),
      "Austria (JJ, 'Wasted Love') won on 17 May 2025 with 436 points, ahead of Israel and Estonia."),
    q("poland-2025", "Who will win the second round of Poland's presidential election on 1 June 2025?",
      "binary_named", ["Karol Nawrocki", "Rafał Trzaskowski"], "A", "2025-06-02",
      WIKI.format("2025_Polish_presidential_election"),
      "The count published on 2 June 2025 gave Karol Nawrocki 50.89% against Rafał Trzaskowski."),
    q("nba-2025", "Which team will win the 2025 NBA Finals?", "binary_named",
      ["Indiana Pacers", "Oklahoma City Thunder"], "B", "2025-06-22", WIKI.format("2025_NBA_Finals"),
      "The Oklahoma City Thunder beat the Indiana Pacers in Game 7 on 22 June 2025 to win the series 4-3."),
    q("ecb-2025-07", "What will the ECB decide for its deposit facility rate at its 24 July 2025 meeting?",
      "multiple_choice", ["Cut of 0.25 percentage points or more", "No change", "Increase"], "B",
      "2025-07-24", ECB_RATES,
      "On 24 July 2025 the ECB left the deposit facility rate unchanged at 2.00%."),
    q("gpt5", "Will OpenAI release a model named GPT-5 to ChatGPT users by 31 August 2025?", "yes_no", YES_NO,
      "A", "2025-08-07", WIKI.format("GPT-5"),
      "OpenAI released GPT-5 in ChatGPT on 7 August 2025."),
    q("ballon-2025", "Who will win the 2025 men's Ballon d'Or?", "multiple_choice",
      ["Kylian Mbappé", "Lamine Yamal", "Mohamed Salah", "Ousmane Dembélé", "Raphinha", "Vitinha"], "D",
      "2025-09-22", WIKI.format("2025_Ballon_d%27Or"),
      "Ousmane Dembélé received the 2025 Ballon d'Or in Paris on 22 September 2025, ahead of Lamine Yamal."),
    q("ldp-2025", "Who will win the Liberal Democratic Party presidential election held on 4 October 2025?",
      "multiple_choice",
      ["Sanae Takaichi", "Shinjiro Koizumi", "Takayuki Kobayashi", "Toshimitsu Motegi", "Yoshimasa Hayashi"],
      "A", "2025-10-04", WIKI.format("2025_Liberal_Democratic_Party_presidential_election"),
      "Sanae Takaichi beat Shinjiro Koizumi 185-156 in the runoff on 4 October 2025."),
    q("nobel-peace-trump", "Will Donald Trump be awarded the 2025 Nobel Peace Prize?", "yes_no", YES_NO, "B",
      "2025-10-10", "https://www.nobelprize.org/prizes/peace/2025/summary/",
      "The 2025 Nobel Peace Prize, announced on 10 October 2025, went to María Corina Machado."),
    q("ws-2025", "Which team will win the 2025 World Series?", "binary_named",
      ["Los Angeles Dodgers", "Toronto Blue Jays"], "A", "2025-11-01", WIKI.format("2025_World_Series"),
      "The Los Angeles Dodgers won Game 7 in Toronto 5-4 in 11 innings on 1 November 2025."),
    q("f1-2025", "Who will win the 2025 Formula One World Drivers' Championship?", "multiple_choice",
      ["Charles Leclerc", "George Russell", "Lando Norris", "Max Verstappen", "Oscar Piastri"], "C",
      "2025-12-07", WIKI.format("2025_Formula_One_World_Championship"),
      "Lando Norris finished third in Abu Dhabi on 7 December 2025 and took the title by two points over Verstappen."),
    q("fed-cuts-2025", "At which of these 2025 FOMC meetings will the Committee lower the target range for the "
      "federal funds rate?", "multiple_choice",
      ["January", "March", "May", "June", "July", "September", "October", "December"], "F, G, H", "2025-12-10",
      "https://www.federalreserve.gov/monetarypolicy/openmarket.htm",
      "The FOMC cut by 0.25 points on 17 September, 29 October and 10 December 2025, to 3.50-3.75%."),
    # ----------------------------------------------------------------------------- 2026
    q("fed-2026-01", "Will the FOMC lower the target range for the federal funds rate at its 27-28 January "
      "2026 meeting?", "yes_no", YES_NO, "B", "2026-01-28", FED.format("20260128"),
      "On 28 January 2026 the FOMC held the target range at 3.50-3.75%, with Miran and Waller dissenting."),
    q("ao-2026", "Who will win the 2026 Australian Open men's singles final?", "binary_named",
      ["Carlos Alcaraz", "Novak Djokovic"], "A", "2026-02-01",
      WIKI.format("2026_Australian_Open_%E2%80%93_Men%27s_singles"),
      "Carlos Alcaraz beat Novak Djokovic 2-6 6-2 6-3 7-5 in the final on 1 February 2026."),
    q("sb-lx", "Which team will win Super Bowl LX on 8 February 2026?", "binary_named",
      ["New England Patriots", "Seattle Seahawks"], "B", "2026-02-08", WIKI.format("Super_Bowl_LX"),
      "The Seattle Seahawks beat the New England Patriots 29-13 in Super Bowl LX on 8 February 2026."),
    q("milano-12gold", "Which national Olympic committees will win at least 12 gold medals at the Milano "
      "Cortina 2026 Winter Olympics?", "multiple_choice",
      ["Germany", "Italy", "Netherlands", "Norway", "Sweden", "United States"], "D, F", "2026-02-22",
      WIKI.format("2026_Winter_Olympics_medal_table"),
      "When the Games closed on 22 February 2026 Norway had 18 golds and the United States 12; no other "
      "team reached 12."),
    q("oscars-bp-2026", "Which film will win Best Picture at the 98th Academy Awards on 15 March 2026?",
      "multiple_choice",
      ["Bugonia", "F1", "Frankenstein", "Hamnet", "Marty Supreme", "One Battle After Another",
       "Sentimental Value", "Sinners", "The Secret Agent", "Train Dreams"], "F", "2026-03-15",
      WIKI.format("98th_Academy_Awards"),
      "One Battle After Another won Best Picture at the 98th Academy Awards on 15 March 2026."),
    q("oscars-3plus-2026", "Which films will win at least three Academy Awards at the 98th Academy Awards on "
      "15 March 2026?", "multiple_choice",
      ["Frankenstein", "Hamnet", "KPop Demon Hunters", "Marty Supreme", "One Battle After Another",
       "Sentimental Value", "Sinners"], "A, E, G", "2026-03-15", WIKI.format("98th_Academy_Awards"),
      "On 15 March 2026 One Battle After Another won 6 Oscars, Sinners 4, Frankenstein 3 and KPop Demon "
      "Hunters 2."),
    q("fed-2026-03", "Will the FOMC lower the target range for the federal funds rate at its 17-18 March "
      "2026 meeting?", "yes_no", YES_NO, "B", "2026-03-18", FED.format("20260318"),
      "On 18 March 2026 the FOMC voted 11-1 to hold the target range at 3.50-3.75%, Miran dissenting."),
    q("hungary-2026", "Which party list will win the most seats in Hungary's parliamentary election on "
      "12 April 2026?", "binary_named", ["Fidesz-KDNP", "Tisza"], "B", "2026-04-12",
      WIKI.format("2026_Hungarian_parliamentary_election"),
      "Tisza won a two-thirds majority on 12 April 2026 and Viktor Orbán conceded that night."),
]


def question_id(event: str) -> str:
    """Stable 24-hex id (the width of FutureX's ObjectIds) derived from the event text."""
    return hashlib.sha256(event.encode("utf-8")).hexdigest()[:24]


def choice_type(answer: str) -> str:
    return "single" if len(split_answer(answer)) == 1 else "multi"


def level(question_type: str) -> int:
    """FutureX levels: 1 for few-choice items (yes/no, two named options), 2 for wider choice."""
    return 2 if question_type == "multiple_choice" else 1


def futurex_row(item: dict) -> dict:
    """One question in FutureX-Past's raw shape, keys in the documented order."""
    return {
        "id": question_id(item["event"]),
        "prompt": render_prompt(item["event"], item["options"], item["end_time"], item["question_type"]),
        "ground_truth": ground_truth_literal(item["question_type"], item["options"], item["answer"]),
        "end_time": item["end_time"],
        "level": level(item["question_type"]),
        "title": item["event"],
        "source_url": item["source_url"],
        "resolution_note": item["resolution_note"],
    }


def sample_rows() -> list[dict]:
    rows = [futurex_row(item) for item in QUESTIONS]
    return sorted(rows, key=lambda row: (row["end_time"], row["id"]))


def main() -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in sample_rows())
    OUT_PATH.write_text(text, encoding="utf-8")
    print(f"wrote {len(QUESTIONS)} questions to {OUT_PATH}")


if __name__ == "__main__":
    main()
